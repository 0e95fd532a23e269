"""The data "Variable-length losses" trains on: padded token sequences of varied lengths from a
known source, so that the per-token loss a perfect model reaches is known in closed form.

Each sequence opens with a token drawn uniformly from the V content tokens (nothing before it
predicts it: ln V nats at best), and every later token is one of two equally likely successors
of the token before it (ln 2 at best). A sequence of L target tokens therefore has a best mean
loss of (ln V + (L - 1) ln 2) / L: short sequences are harder per token than long ones. That one
fact is what lets a mean of batch means drift from the per-token corpus mean when batches differ
in length.

The training loader keeps documents over 32 tokens in a bucket of their own, as a loader that
saves padding does, and shuffles the rest into batches: with mixed lengths, the long documents
land together in one batch of the epoch, which holds several times the tokens of any other, while
the ordinary batches hold about the same number (64, within a few).
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass
from typing import Any

import torch

VOCAB = 16  # content tokens 0..15
PAD = VOCAB  # input id of padding (its label is IGNORE)
BOS = VOCAB + 1  # input id that starts every sequence
IGNORE = -100  # the label of a padded position: cross_entropy skips it
BATCH = 8  # sequences per batch
BATCHES = 16  # batches in the training set, and in the evaluation set
SHORT = (7, 9)  # lengths (target tokens) of ordinary sequences, inclusive
LONG = (40, 56)  # lengths of the long documents: one batch's worth of them per set
LONG_FROM = 32  # the training loader's own bucket takes sequences longer than this
EQUAL = 8  # the length of every sequence when lengths are equal
# The fixed count "sum-per-budget" divides by: the tokens of an ordinary batch, B x the mean
# ordinary length (8 x 8); with equal lengths, exactly every batch's count.
TOKEN_BUDGET = BATCH * EQUAL


@dataclass(frozen=True)
class Batch:
    inputs: torch.Tensor  # (B, Lmax) int64: BOS then the tokens, padded with PAD
    labels: torch.Tensor  # (B, Lmax) int64: the next token, IGNORE on padding
    lengths: tuple[int, ...]  # target tokens of each sequence

    @property
    def tokens(self) -> int:
        return sum(self.lengths)


def successor_table(generator: torch.Generator) -> torch.Tensor:
    """(VOCAB, 2): the two tokens that may follow each token, distinct."""
    rows = [torch.randperm(VOCAB, generator=generator)[:2] for _ in range(VOCAB)]
    return torch.stack(rows)


def draw_lengths(lengths: str, generator: torch.Generator) -> list[int]:
    """BATCHES x BATCH lengths: ordinary ones, and one batch's worth of long documents."""
    count = BATCH * BATCHES
    if lengths == "equal":
        return [EQUAL] * count
    short = torch.randint(SHORT[0], SHORT[1] + 1, (count - BATCH,), generator=generator)
    long = torch.randint(LONG[0], LONG[1] + 1, (BATCH,), generator=generator)
    return [int(v) for v in torch.cat([short, long])]


def draw_sequence(length: int, table: torch.Tensor, generator: torch.Generator) -> list[int]:
    first = int(torch.randint(0, VOCAB, (1,), generator=generator))
    sequence = [first]
    for choice in torch.randint(0, 2, (length - 1,), generator=generator).tolist():
        sequence.append(int(table[sequence[-1], choice]))
    return sequence


def collate(sequences: list[list[int]]) -> Batch:
    """Pad to the longest sequence: inputs are BOS + tokens[:-1], labels the tokens."""
    width = max(len(s) for s in sequences)
    inputs = torch.full((len(sequences), width), PAD, dtype=torch.int64)
    labels = torch.full((len(sequences), width), IGNORE, dtype=torch.int64)
    for row, sequence in enumerate(sequences):
        inputs[row, : len(sequence)] = torch.tensor([BOS, *sequence[:-1]])
        labels[row, : len(sequence)] = torch.tensor(sequence)
    return Batch(inputs, labels, tuple(len(s) for s in sequences))


def by_length(sequences: list[list[int]]) -> list[Batch]:
    """Sorted by length, then cut into batches of BATCH: the bucketing loader."""
    ordered = sorted(sequences, key=len)
    return [collate(ordered[i : i + BATCH]) for i in range(0, len(ordered), BATCH)]


def long_bucket(sequences: list[list[int]], generator: torch.Generator) -> list[Batch]:
    """The training loader: sequences over LONG_FROM tokens batched together (last), the rest
    shuffled into batches."""
    long = [s for s in sequences if len(s) > LONG_FROM]
    ordinary = [s for s in sequences if len(s) <= LONG_FROM]
    return shuffled(ordinary, generator) + by_length(long)


def shuffled(sequences: list[list[int]], generator: torch.Generator) -> list[Batch]:
    order = torch.randperm(len(sequences), generator=generator).tolist()
    mixed = [sequences[i] for i in order]
    return [collate(mixed[i : i + BATCH]) for i in range(0, len(mixed), BATCH)]


def corrupt(batch: Batch) -> Batch:
    """The same inputs with every real label moved to the next token id, as a botched id
    mapping does: a broken batch, whose labels the rest of the data contradicts."""
    labels = batch.labels.clone()
    real = labels != IGNORE
    labels[real] = (labels[real] + 1) % VOCAB
    return Batch(batch.inputs, labels, batch.lengths)


def best_sequence_loss(length: int) -> float:
    """The lowest summed loss of a sequence of `length` targets: its first token, then L - 1."""
    return math.log(VOCAB) + (length - 1) * math.log(2)


def best_per_token(lengths: list[int]) -> float:
    """The per-token corpus mean a perfect model reaches on sequences of these lengths."""
    return sum(best_sequence_loss(n) for n in lengths) / sum(lengths)


def best_batch_means(batches: list[tuple[int, ...]]) -> float:
    """The mean of batch means a perfect model reaches, each batch's per-token mean weighted
    equally whatever its token count."""
    return sum(best_per_token(list(b)) for b in batches) / len(batches)


def sequences_digest(sequences: list[list[int]]) -> str:
    sha = hashlib.sha256()
    for sequence in sequences:
        sha.update(struct.pack(f"<H{len(sequence)}B", len(sequence), *sequence))
    return sha.hexdigest()


def decoded(batch: Batch, count: int = 2) -> list[dict[str, Any]]:
    """The first rows of a batch, as the tokens and the labels the loss reads."""
    rows = []
    for row in range(min(count, len(batch.lengths))):
        n = batch.lengths[row]
        rows.append(
            {
                "length": n,
                "inputs": ["BOS" if t == BOS else str(t) for t in batch.inputs[row, :n].tolist()],
                "labels": [str(t) for t in batch.labels[row, :n].tolist()],
            }
        )
    return rows
