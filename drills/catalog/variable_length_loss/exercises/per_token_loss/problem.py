"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The data are the drill's own padded sequences
(drills/catalog/variable_length_loss/problem.py): ordinary ones of 7-9 tokens shuffled into
batches and the long documents (40-56) in a batch of their own; the model is its bigram model."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from drills.catalog.variable_length_loss.problem import (
    BOS,
    Batch,
    draw_lengths,
    draw_sequence,
    long_bucket,
    successor_table,
)
from drills.catalog.variable_length_loss.train import make_model

WIDTH = 32  # the drill's bigram model
EPOCHS = 20  # passes over the 16 training batches in a training run
# Which batch the single step is taken on: the case's label says which.
FIRST_BATCH = ("ordinary", "long")


@dataclass(frozen=True)
class Problem:
    model: nn.Module  # at its initial weights, fixed by the seed
    batches: list[Batch]  # one epoch, in order; the long documents are the last
    held_out: list[list[int]]  # sequences of the same source, for the per-token corpus mean
    first: Batch  # the batch of the single step


def build(case: int, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    table = successor_table(generator)
    train = [draw_sequence(n, table, generator) for n in draw_lengths("mixed", generator)]
    held_out = [draw_sequence(n, table, generator) for n in draw_lengths("mixed", generator)]
    batches = long_bucket(train, generator)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = make_model(WIDTH)
    first = batches[0] if FIRST_BATCH[case] == "ordinary" else batches[-1]
    return Problem(model, batches, held_out, first)


def fresh_model(problem: Problem) -> nn.Module:
    """A new model at the problem's initial weights."""
    model = make_model(WIDTH)
    model.load_state_dict(problem.model.state_dict())
    return model


def as_pairs(batches: list[Batch]) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """The batches as new (inputs, labels) tensors: whatever the code does to them, the problem
    keeps its own."""
    return [(b.inputs.clone(), b.labels.clone()) for b in batches]


def training_run(problem: Problem) -> list[Batch]:
    return problem.batches * EPOCHS


@torch.no_grad()
def corpus_per_token(weights: dict[str, torch.Tensor], sequences: list[list[int]]) -> float:
    """Every held-out token's loss over every token, one sequence at a time, in float64."""
    embedding, linear = weights["0.weight"].double(), weights["1.weight"].double()
    bias = weights["1.bias"].double()
    total, count = 0.0, 0
    for sequence in sequences:
        inputs = torch.tensor([BOS, *sequence[:-1]])
        logits = embedding[inputs] @ linear.T + bias
        total += float(-torch.log_softmax(logits, dim=1)[range(len(sequence)), sequence].sum())
        count += len(sequence)
    return total / count
