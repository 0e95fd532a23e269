"""The problem "Padding masks" trains on, and its model: one attention layer over padded tokens.

Each sequence holds 4-16 tokens from a vocabulary of 10, and every token has a value (a fixed
random number per token). A token's label says whether its value lies above the mean value of
its own sequence: a question about the whole sequence, which the model answers by averaging over
it with attention. Batches are padded with PAD (id 0) up to a fixed length; a padding position's
label is PAD too, so a loss that counts it has something easy to predict there.

The model is written out here, a few lines, so the two masks are plain to see: the attention
mask keeps the keys that are padding out of every softmax; the loss mask (in train.py) keeps the
padding positions out of the average.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

PAD = 0  # the padding token, and the label of a padding position
VOCAB = 10  # real tokens are 1..VOCAB
BELOW, ABOVE, PAD_CLASS = 0, 1, 2  # labels: the token's value below / above its sequence's mean
SHORTEST, LONGEST = 4, 16  # real tokens per sequence, drawn uniformly between the two


@dataclass(frozen=True)
class Sequences:
    """Unpadded sequences and their per-token labels."""

    tokens: list[torch.Tensor]  # each (length,) int64, values 1..VOCAB
    labels: list[torch.Tensor]  # each (length,) int64, BELOW or ABOVE

    def __len__(self) -> int:
        return len(self.tokens)


def make_sequences(count: int, values: torch.Tensor, generator: torch.Generator) -> Sequences:
    """`count` sequences of uniformly drawn lengths; `values[t]` is token t's value."""
    lengths = torch.randint(SHORTEST, LONGEST + 1, (count,), generator=generator).tolist()
    tokens, labels = [], []
    for length in lengths:
        sequence = torch.randint(1, VOCAB + 1, (length,), generator=generator)
        own = values[sequence]
        tokens.append(sequence)
        labels.append((own > own.mean()).long())  # ABOVE = 1, BELOW = 0
    return Sequences(tokens, labels)


def token_values(generator: torch.Generator) -> torch.Tensor:
    """One value per token id (index 0, PAD, unused)."""
    return torch.randn(VOCAB + 1, generator=generator)


def pad_batch(sequences: Sequences, index: list[int], pad_to: int) -> tuple[torch.Tensor, ...]:
    """The chosen sequences padded to `pad_to`: tokens, labels (PAD_CLASS on padding) and the
    mask of real positions (True where a token is real)."""
    tokens = torch.full((len(index), pad_to), PAD, dtype=torch.long)
    labels = torch.full((len(index), pad_to), PAD_CLASS, dtype=torch.long)
    for row, i in enumerate(index):
        length = len(sequences.tokens[i])
        tokens[row, :length] = sequences.tokens[i]
        labels[row, :length] = sequences.labels[i]
    return tokens, labels, tokens != PAD


class TinyAttention(nn.Module):
    """An embedding, one single-head attention layer, and a per-token head that reads the
    token's own embedding beside what it attended to."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB + 1, width)  # PAD has a learned embedding, like any id
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)
        self.head = nn.Linear(2 * width, 3)  # BELOW, ABOVE, PAD_CLASS
        self.width = width

    def forward(self, tokens: torch.Tensor, key_mask: torch.Tensor | None) -> torch.Tensor:
        """Logits (batch, length, 3). `key_mask` (batch, length), True for real tokens, keeps
        every padding key out of the softmax; None lets every position attend to every other."""
        h = self.embed(tokens)
        scores = self.query(h) @ self.key(h).transpose(1, 2) / math.sqrt(self.width)
        if key_mask is not None:
            # -inf before the softmax: a padding key gets a weight of exactly 0, so a real
            # token's output is what it would be with no padding at all.
            scores = scores.masked_fill(~key_mask[:, None, :], float("-inf"))
        attended = torch.softmax(scores, dim=-1) @ self.value(h)
        out: torch.Tensor = self.head(torch.cat([h, attended], dim=-1))
        return out


def sequences_digest(sequences: Sequences) -> str:
    sha = hashlib.sha256()
    for tokens in sequences.tokens:
        flat = tokens.tolist()
        sha.update(struct.pack(f"<I{len(flat)}q", len(flat), *flat))
    return sha.hexdigest()


def decoded_examples(sequences: Sequences, pad_to: int, count: int = 3) -> list[dict[str, Any]]:
    """A few sequences as the loop feeds them: the tokens padded, "_" for PAD, and the labels."""
    tokens, labels, _ = pad_batch(sequences, list(range(count)), pad_to)
    marks = {BELOW: "-", ABOVE: "+", PAD_CLASS: "_"}
    return [
        {
            "tokens": " ".join("_" if t == PAD else str(t) for t in row.tolist()),
            "labels": "".join(marks[label] for label in labels_row.tolist()),
            "real_tokens": len(sequences.tokens[i]),
        }
        for i, (row, labels_row) in enumerate(zip(tokens, labels, strict=True))
    ]
