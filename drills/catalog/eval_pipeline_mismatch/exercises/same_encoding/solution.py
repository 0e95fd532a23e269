"""Evaluating the ticket router (reference solution): the evaluation encodes tickets as training
did, so the router is scored on inputs like those it learned from.

The judge calls encode_for_evaluation(subject, body, tokenizer) on hidden evaluation tickets
(a subject such as "Battery broken again" and a body that starts with the product's name, such
as "Kelo cable late") and feeds the ids it returns to a router trained on tickets that
encode_for_training() encoded. It compares your ids with the training code's, ticket by
ticket, and scores the router on them.

    tokenizer.encode(text, add_special_tokens=True) -> list[int]
        splits on spaces; "<bos>", "<sep>" and "<eos>" in the text are special tokens; a word
        not in the vocabulary becomes "<unk>"; with add_special_tokens it adds <bos> in front
        and <eos> at the end
    tokenizer.decode(ids) -> str
        the ids back to tokens, joined by spaces
"""

from typing import Any

SEP = "<sep>"


def normalise(text: str) -> str:
    return text.lower()


def encode_for_training(subject: str, body: str, tokenizer: Any) -> list[int]:
    """How every training ticket was encoded (do not change: the router learned from this)."""
    return tokenizer.encode(f"{normalise(subject)} {SEP} {normalise(body)}")


def encode_for_evaluation(subject: str, body: str, tokenizer: Any) -> list[int]:
    """How the evaluation script encodes a ticket, written from its prompt template."""
    # The same normalisation as training, and no <bos> in the template: the tokenizer adds
    # the one start token itself. Decoded, both paths now give the very same tokens.
    prompt = f"{normalise(subject)} {SEP} {normalise(body)}"
    return tokenizer.encode(prompt)


if __name__ == "__main__":
    # A local look with a small tokenizer of your own (the judge ignores this block).
    class Tokenizer:
        def __init__(self, words: list[str]) -> None:
            self.vocabulary = ["<pad>", "<unk>", "<bos>", "<sep>", "<eos>", *words]

        def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
            ids = [self.vocabulary.index(w) if w in self.vocabulary else 1 for w in text.split()]
            return [2, *ids, 4] if add_special_tokens else ids

        def decode(self, ids: list[int]) -> str:
            return " ".join(self.vocabulary[i] for i in ids if i != 0)

    tokenizer = Tokenizer("battery broken again kelo cable late".split())
    subject, body = "Battery broken again", "Kelo cable late"
    print("training:  ", tokenizer.decode(encode_for_training(subject, body, tokenizer)))
    print("evaluation:", tokenizer.decode(encode_for_evaluation(subject, body, tokenizer)))

# mypy: disable-error-code="no-any-return"
