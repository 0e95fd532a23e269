"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside).

Two kinds of hidden run. The loader runs hand batch_is_static() a single-batch loader of one
kind (LOADERS): each pass over it yields one batch (features, labels). These loaders draw from
generators of their own, seeded from the hidden seed, so the judge rebuilds the same loader
outside and iterates it itself to know whether its batch is static: nothing the learner's code
seeds changes them.

The seeded runs hand seeded_overfit() a loader that draws from torch's and Python's global
random state (a random subset of a small set, with noise and a random scale on top), and a
make_model() whose small network has dropout: both must be seeded for a run to repeat. The
networks built here record what the judge compares: each forward's input, logits and dropout
mask (see Recorded).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field

import torch
from torch import nn

FEATURES, HIDDEN, CLASSES, BATCH, POOL = 6, 32, 3, 8, 32
STEPS = 20  # optimizer steps of a seeded run
DROPOUT = 0.2

# The loader of each loader run, in the order of the exercise's first cases; then the seeded runs.
LOADERS = ("shuffling", "augmenting", "same-tensors", "equal-copies", "in-place", "labels-apart")
STATIC = ("same-tensors", "equal-copies")
SEEDED_RUNS = 2
RUNS = ("a", "b", "c")  # a seeded run is called three times: seeds s, s, and s + 1

Batch = tuple[torch.Tensor, torch.Tensor]


class HiddenLoader:
    """A single-batch loader: every pass (every `for batch in loader`) yields one batch."""

    def __init__(self, kind: str, seed: int) -> None:
        self.kind = kind
        self.generator = torch.Generator().manual_seed(seed)
        self.features = torch.randn(BATCH, FEATURES, generator=self.generator)
        self.labels = torch.randint(CLASSES, (BATCH,), generator=self.generator)
        self.passes = 0

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[Batch]:
        self.passes += 1
        yield self.next_batch()

    def next_batch(self) -> Batch:
        g = self.generator
        if self.kind == "shuffling":  # a fresh order of the same examples every pass
            order = torch.randperm(BATCH, generator=g)
            return self.features[order], self.labels[order]
        if self.kind == "augmenting":  # fresh noise on top of the batch every pass
            noise = 0.1 * torch.randn(BATCH, FEATURES, generator=g)
            return self.features + noise, self.labels.clone()
        if self.kind == "same-tensors":  # the very same tensors, untouched
            return self.features, self.labels
        if self.kind == "equal-copies":  # new tensors, equal bit for bit
            return self.features.clone(), self.labels.clone()
        if self.kind == "in-place":  # the same tensor object, changed in place each pass
            if self.passes > 1:
                self.features.add_(0.1 * torch.randn(BATCH, FEATURES, generator=g))
            return self.features, self.labels
        if self.kind == "labels-apart":  # the features stay; the labels get their own order
            return self.features, self.labels[torch.randperm(BATCH, generator=g)]
        raise ValueError(self.kind)


def loader_truth(kind: str, seed: int) -> bool:
    """Whether the loader's batch is the same on two passes, bit for bit, measured here."""
    loader = HiddenLoader(kind, seed)
    first = [t.clone() for t in next(iter(loader))]
    second = next(iter(loader))
    return all(torch.equal(a, b) for a, b in zip(first, second, strict=True))


class GlobalLoader:
    """The seeded runs' loader: a random subset of a small set, a random scale and noise, drawn
    from torch's and Python's global random state at every pass. Keeps what it handed out."""

    def __init__(self, seed: int) -> None:
        generator = torch.Generator().manual_seed(seed)
        self.pool = torch.randn(POOL, FEATURES, generator=generator)
        self.pool_labels = torch.randint(CLASSES, (POOL,), generator=generator)
        self.handed: list[Batch] = []

    def __len__(self) -> int:
        return 1

    def __iter__(self) -> Iterator[Batch]:
        order = torch.randperm(POOL)[:BATCH]
        scale = random.uniform(0.8, 1.2)
        features = scale * self.pool[order] + 0.05 * torch.randn(BATCH, FEATURES)
        labels = self.pool_labels[order].clone()
        self.handed.append((features.detach().clone(), labels.clone()))
        yield features, labels


@dataclass
class Recorded:
    """What one network saw while it trained: per forward, its input, logits and dropout mask."""

    inputs: list[torch.Tensor] = field(default_factory=list)
    logits: list[torch.Tensor] = field(default_factory=list)
    masks: list[torch.Tensor] = field(default_factory=list)


class SmallNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Linear(FEATURES, HIDDEN)
        self.out = nn.Linear(HIDDEN, CLASSES)
        self.recorded: Recorded | None = None  # set by the harness: the judge's own record

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.hidden(x))
        if not self.training:
            return self.out(h)  # type: ignore[no-any-return]
        # Dropout drawn as nn.Dropout draws it, from torch's global random state, but by hand,
        # so that the mask itself is recorded (a zero after ReLU would hide it in the output).
        keep = torch.rand_like(h) >= DROPOUT
        logits: torch.Tensor = self.out(h * keep / (1 - DROPOUT))
        if self.recorded is not None:
            self.recorded.inputs.append(x.detach().clone())
            self.recorded.logits.append(logits.detach().clone())
            self.recorded.masks.append(keep.clone())
        return logits


def net_from(weights: dict[str, torch.Tensor]) -> SmallNet:
    net = SmallNet()
    net.load_state_dict(weights)
    return net.eval()


def run_seed(seed: int) -> int:
    """The seed a seeded run hands seeded_overfit() (run c gets this plus one)."""
    return seed % 10_000
