"""The problem "Evaluation pipeline mismatch" trains on: support tickets routed to one of four
teams, a word-level tokenizer, and the two code paths that turn a ticket into token ids.

A ticket is a subject ("Battery broken again") and a body that starts with the product's name
("Kelo arrived late"). The team depends on the product only, through a table drawn per seed, so
a model that has seen every product answers every ticket; the other words are noise. Product
names are capitalised in the raw text, like names are.

The training path normalises (lower-cases) both fields, joins them around a separator token and
encodes them; the tokenizer adds the start and end tokens. The evaluation path is a second
function, written apart, as evaluation code often is: with `evaluation="training"` it calls the
very same code, and each other value is one way such a copy drifts from it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import torch

PAD, UNK, BOS, SEP, EOS = "<pad>", "<unk>", "<bos>", "<sep>", "<eos>"
SPECIALS = (PAD, UNK, BOS, SEP, EOS)
TEAMS = 4
MAX_TOKENS = 12  # the longest encoding (a doubled start token: 10 tokens), padded to this
PRODUCTS_PER_SOURCE = 128
# The ordinary words of subjects and bodies: they carry nothing about the team.
WORDS = (
    "screen battery broken late refund again order cable charger slow missing noisy cracked "
    "box delivery keyboard warm cold button light sound update manual colour"
).split()
CONSONANTS, VOWELS = "bdfgklmnprstvz", "aeiou"
PIPELINES = ("training", "double-start", "no-separator", "no-lowercase")


def product_names() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Two fixed lists of made-up product names: those on sale when the tokenizer and the
    training set were made ("launch"), and those added later ("new"). The same on every seed."""
    generator = torch.Generator().manual_seed(20261203)
    names: list[str] = []
    while len(names) < 2 * PRODUCTS_PER_SOURCE:
        letters = torch.randint(len(CONSONANTS) * len(VOWELS), (2,), generator=generator)
        name = "".join(
            CONSONANTS[int(i) // len(VOWELS)] + VOWELS[int(i) % len(VOWELS)] for i in letters
        )
        if name not in names and name not in WORDS:
            names.append(name)
    return tuple(names[:PRODUCTS_PER_SOURCE]), tuple(names[PRODUCTS_PER_SOURCE:])


LAUNCH, NEW = product_names()


@dataclass(frozen=True)
class Ticket:
    subject: str  # raw text, first word capitalised
    body: str  # raw text, starting with the capitalised product name
    team: int


class WordTokenizer:
    """Splits on spaces; special tokens are written in the text as "<sep>"; every other word
    not in the vocabulary becomes <unk>. encode() adds <bos> and <eos> itself unless told not
    to, as tokenizers with special tokens on do."""

    def __init__(self, words: list[str]) -> None:
        self.vocabulary = list(SPECIALS) + sorted(set(words) - set(SPECIALS))
        self.ids = {word: index for index, word in enumerate(self.vocabulary)}

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        unknown = self.ids[UNK]
        words = [self.ids.get(word, unknown) for word in text.split()]
        return [self.ids[BOS], *words, self.ids[EOS]] if add_special_tokens else words

    def decode(self, ids: list[int]) -> str:
        return " ".join(self.vocabulary[i] for i in ids if i != self.ids[PAD])

    def pad(self, ids: list[int]) -> list[int]:
        return ids + [self.ids[PAD]] * (MAX_TOKENS - len(ids))


def normalise(text: str) -> str:
    return text.lower()


def encode_for_training(tokenizer: WordTokenizer, ticket: Ticket) -> list[int]:
    """The training pipeline: normalise, join around the separator, encode."""
    return tokenizer.encode(f"{normalise(ticket.subject)} {SEP} {normalise(ticket.body)}")


def encode_for_evaluation(tokenizer: WordTokenizer, ticket: Ticket, pipeline: str) -> list[int]:
    """The evaluation pipeline, a second code path. "training" calls the training one; the
    others are copies that drifted (the template's own start token on top of the tokenizer's,
    the separator left out of the template, the normalisation step skipped)."""
    subject, body = normalise(ticket.subject), normalise(ticket.body)
    if pipeline == "training":
        return encode_for_training(tokenizer, ticket)
    if pipeline == "double-start":
        return tokenizer.encode(f"{BOS} {subject} {SEP} {body}")
    if pipeline == "no-separator":
        return tokenizer.encode(f"{subject} {body}")
    if pipeline == "no-lowercase":
        return tokenizer.encode(f"{ticket.subject} {SEP} {ticket.body}")
    raise ValueError(f"unknown evaluation pipeline {pipeline!r}")


def team_table(products: tuple[str, ...], generator: torch.Generator) -> dict[str, int]:
    """Each product's team: a balanced random assignment (a quarter of the products each)."""
    teams = torch.randperm(len(products), generator=generator) % TEAMS
    return {name: int(team) for name, team in zip(products, teams, strict=True)}


def make_tickets(
    count: int, products: tuple[str, ...], teams: dict[str, int], generator: torch.Generator
) -> list[Ticket]:
    picks = torch.randint(len(products), (count,), generator=generator)
    words = torch.randint(len(WORDS), (count, 5), generator=generator)
    tickets = []
    for pick, row in zip(picks.tolist(), words.tolist(), strict=True):
        product = products[pick]
        subject = " ".join(WORDS[i] for i in row[:3]).capitalize()
        body = f"{product.capitalize()} {WORDS[row[3]]} {WORDS[row[4]]}"
        tickets.append(Ticket(subject, body, teams[product]))
    return tickets


def vocabulary_words(products: tuple[str, ...]) -> list[str]:
    """What the tokenizer was built from: the ordinary words and the products it knew."""
    return [*WORDS, *products]


def as_tensors(
    tokenizer: WordTokenizer, encoded: list[list[int]], tickets: list[Ticket]
) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.tensor([tokenizer.pad(row) for row in encoded])
    return ids, torch.tensor([ticket.team for ticket in tickets])


def ids_digest(*tensors: torch.Tensor) -> str:
    sha = hashlib.sha256()
    for tensor in tensors:
        sha.update(str(tensor.tolist()).encode())
    return sha.hexdigest()
