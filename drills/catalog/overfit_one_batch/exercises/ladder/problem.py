"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). Each hidden run is a small labelled set (SETS: its width, its
classes, its network's width) and a make_model() that builds small MLPs. The n-th network
make_model() builds in a run starts from weights fixed by (seed, n), drawn without touching the
global random state, so the judge rebuilds any of them outside, and the learner's own seeding
changes nothing about them.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

RUNGS = (1, 2, 5)  # the ladder: the first 1, then 2, then 5 examples of the set
SET_SIZE = 256  # too many random labels to learn by heart in a few hundred small steps


@dataclass(frozen=True)
class Shape:
    features: int
    classes: int
    hidden: int


# One per hidden run, in the order of the exercise's cases.
SETS = (Shape(16, 4, 64), Shape(10, 3, 48), Shape(24, 6, 96))


@dataclass(frozen=True)
class Problem:
    shape: Shape
    features: torch.Tensor  # (SET_SIZE, features) float32
    labels: torch.Tensor  # (SET_SIZE,) int64


def build(case: int, seed: int) -> Problem:
    shape = SETS[case]
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(SET_SIZE, shape.features, generator=generator)
    labels = torch.randint(shape.classes, (SET_SIZE,), generator=generator)
    # The first five examples hold at least two classes, so no rung is won by a constant.
    labels[1] = (labels[0] + 1) % shape.classes
    return Problem(shape, features, labels)


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: the same bits on both sides of the wall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def make_net(shape: Shape, seed: int, number: int) -> nn.Sequential:
    """The `number`-th network of a run (0-based), its weights fixed by (seed, number)."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed * 101 + number)
        return nn.Sequential(
            nn.Linear(shape.features, shape.hidden),
            nn.ReLU(),
            nn.Linear(shape.hidden, shape.hidden),
            nn.ReLU(),
            nn.Linear(shape.hidden, shape.classes),
        )


@torch.no_grad()
def rung_loss(net: nn.Module, problem: Problem, rung: int) -> float:
    """Cross-entropy of `net` on the first `rung` examples of the set, in eval mode."""
    net.eval()
    with one_thread():
        logits = net(problem.features[:rung])
    return float(F.cross_entropy(logits, problem.labels[:rung]))
