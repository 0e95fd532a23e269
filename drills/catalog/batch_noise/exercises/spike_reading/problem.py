"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). A training set drawn as the drill draws it (drills/catalog/
batch_noise/problem.py: a teacher's labels, so some examples stay hard), a small classifier
trained on it for a few full-batch steps (a linear one, or one with a hidden layer: models the
learner has not seen), and the batch of one step whose loss jumped, built in one of the ways
below. The set's size is drawn per run (256 to 1024), so no number carries over between runs.

The report crosses the sandbox's wall as two tensors: "numbers", float64 [batch_loss,
set_loss, sigmas, worst_batch_loss], and "corrupt", bool (1,).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.batch_noise.problem import CORRUPT_SCALE, TASK, make_data
from drills.kit.synthetic_classification import LabelledSet

# What each hidden run is, in the order of the exercise's cases: (B, model, how the batch was
# made). Measured on 300 seeds each (the numbers the choices rest on, batch loss over the worst
# batch of B the set allows): a hard example 0.59-1.0 (3.3-9.0 sigma at B = 1); a hard batch
# 0.82-0.99 (8.6-16 sigma/sqrt(B)); features in other units 2.7-68 (linear model only: a tanh
# layer saturates and hides it); labels from another source 1.12-4.9; one example repeated
# 1.04-1.9 (exactly the set's hardest single loss); ordinary batches 0.01-0.49.
CASES = (
    (1, "linear", "hard"),
    (1, "linear", "other-units"),
    (4, "hidden-layer", "ordinary"),
    (16, "linear", "hard"),
    (16, "hidden-layer", "other-labels"),
    (8, "linear", "repeated"),
    (64, "hidden-layer", "ordinary"),
)
HARD_POOL = 24  # a hard batch of B > 1: B of the set's 24 hardest examples
TRAIN_STEPS, TRAIN_LR = 40, 0.5  # full-batch SGD: losses with a trained model's spread


@dataclass(frozen=True)
class SpikeProblem:
    model: nn.Module
    data: LabelledSet  # the training set
    batch_features: torch.Tensor  # (B, features) float32
    batch_labels: torch.Tensor  # (B,) int64
    how: str  # how the batch was made (CASES)


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: the same bits on both sides of the wall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def build(case: int, seed: int) -> SpikeProblem:
    size, kind, how = CASES[case]
    generator = torch.Generator().manual_seed(seed)
    examples = 256 + int(torch.randint(769, (1,), generator=generator))
    data = make_data(examples, generator)
    with torch.random.fork_rng(devices=[]), one_thread():
        torch.manual_seed(seed)
        model = make_model(kind)
        train(model, data)
        features, labels = make_batch(model, data, size, how, generator)
    return SpikeProblem(model, data, features, labels, how)


def make_model(kind: str) -> nn.Module:
    if kind == "linear":
        return nn.Linear(TASK.features, TASK.classes)
    return nn.Sequential(nn.Linear(TASK.features, 16), nn.Tanh(), nn.Linear(16, TASK.classes))


def train(model: nn.Module, data: LabelledSet) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=TRAIN_LR)
    for _ in range(TRAIN_STEPS):
        optimizer.zero_grad()
        F.cross_entropy(model(data.features), data.labels).backward()  # type: ignore[no-untyped-call]
        optimizer.step()
    optimizer.zero_grad(set_to_none=True)


@torch.no_grad()
def make_batch(
    model: nn.Module, data: LabelledSet, size: int, how: str, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    losses = F.cross_entropy(model(data.features), data.labels, reduction="none")
    hardest = losses.argsort(descending=True)
    if how == "hard":
        # At B = 1 one of the two hardest examples; above it, B of the 24 hardest: clean
        # examples of the set, so never above its worst batch, yet many sigma above its mean.
        pool = hardest[: 2 if size == 1 else HARD_POOL]
        index = pool[torch.randperm(len(pool), generator=generator)[:size]]
    elif how == "repeated":
        index = hardest[:1].repeat(size)  # a loader that hands out one index B times
    else:
        index = torch.randperm(len(data), generator=generator)[:size]
    features, labels = data.features[index].clone(), data.labels[index].clone()
    if how == "other-units":
        # Features in other units, each label the class the model finds least likely there.
        features = features * CORRUPT_SCALE
        labels = model(features).argmin(dim=1)
    elif how == "other-labels":
        labels = data.teacher_probs[index].argmin(dim=1)  # labels from another source
    return features, labels
