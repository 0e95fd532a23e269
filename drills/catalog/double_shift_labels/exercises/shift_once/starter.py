"""Labels for a causal LM that shifts them itself. Write prepare_labels().

The model works like Hugging Face's causal-LM classes: called as model(input_ids, labels=labels)
it returns the loss, scoring the logit at each position t against labels[:, t + 1]. Each
sequence is a prompt, then a response, then padding; only the response is trained on.

The judge calls prepare_labels() on hidden batches and compares what it returns with the labels
this model needs; then it trains a small model with your labels and measures how well that
model predicts the next response letter.

    input_ids       (B, T) int64: token ids
    attention_mask  (B, T) int64: 1 on real tokens, 0 on padding
    response_mask   (B, T) bool: True on the response's tokens
    returns         (B, T) int64 labels; -100 where a position must not count in the loss
"""

import torch

IGNORE = -100  # cross_entropy's ignore_index: a label that does not count


def prepare_labels(
    input_ids: torch.Tensor, attention_mask: torch.Tensor, response_mask: torch.Tensor
) -> torch.Tensor:
    # Each position is trained to predict the token after it.
    labels = torch.full_like(input_ids, IGNORE)
    labels[:, :-1] = input_ids[:, 1:]
    # Only the response is supervised: the prompt and the padding do not count.
    labels[attention_mask == 0] = IGNORE
    labels[~response_mask] = IGNORE
    return labels


if __name__ == "__main__":
    # A local look at the pairs the loss sees (the judge ignores this block).
    letters = "abcdABCD_"  # a-d: prompt, A-D: response, _: padding (id 8)
    ids = torch.tensor([[0, 1, 2, 4, 6, 5, 7, 8, 8]])
    attention = (ids != 8).long()
    response = (ids >= 4) & (ids < 8)
    labels = prepare_labels(ids, attention, response)
    print("position  input  scored against")
    for t in range(ids.shape[1] - 1):
        label = int(labels[0, t + 1])  # what the model does with your labels
        shown = letters[label] if label != IGNORE else "(not counted)"
        print(f"{t:>8}  {letters[int(ids[0, t])]:>5}  {shown}")
