"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). A small classifier (two hidden layers, a learned gain per
unit, a head), its optimizer and one batch, with loss.backward() already run. Each hidden run
breaks one link of the step its own way; the seed picks the layer.

The audit's rows cross the sandbox's wall as one float64 tensor, a row per named parameter in
the order of model.named_parameters(), with the columns of COLUMNS (see `encode_row`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

FEATURES, HIDDEN, CLASSES, EXAMPLES = 8, 16, 4, 32
LAYERS = ("embed", "body", "head")

# What each hidden run breaks, in the order of the exercise's cases.
FAULTS = ("healthy", "detached", "frozen", "left-out", "nan-grad", "zeroed-detached")

STATES = ("none", "zero", "finite", "non-finite")  # the audit's grad states; the code is the index
# One row of the audit as it crosses the wall. "norm given": 1 when grad_norm was a number.
COLUMNS = ("requires_grad", "in_optimizer", "grad", "norm given", "grad_norm")


class GatedNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Linear(FEATURES, HIDDEN)
        self.body = nn.Linear(HIDDEN, HIDDEN)
        self.gain = nn.Parameter(torch.empty(HIDDEN).uniform_(0.5, 1.5))
        self.head = nn.Linear(HIDDEN, CLASSES)
        self.detach_after: str | None = None  # "embed" or "body": the graph cut there

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.embed(x))
        h = h.detach() if self.detach_after == "embed" else h
        h = torch.relu(self.body(h))
        h = h.detach() if self.detach_after == "body" else h
        # A gain kept non-negative the way a tutorial might: its square root where it is
        # positive, 0 elsewhere. A negative entry's gradient is 0 * nan = nan.
        gain = torch.where(self.gain > 0, self.gain.sqrt(), torch.zeros_like(self.gain))
        return self.head(h * gain)  # type: ignore[no-any-return]


@dataclass
class Problem:
    model: GatedNet
    optimizer: torch.optim.Optimizer
    loss: torch.Tensor  # backpropagated: the gradients are in .grad


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: the same bits on both sides of the wall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def build(fault: str, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    features = torch.randn(EXAMPLES, FEATURES, generator=generator)
    labels = torch.randint(CLASSES, (EXAMPLES,), generator=generator)
    layer = LAYERS[int(torch.randint(len(LAYERS), (1,), generator=generator))]
    with torch.random.fork_rng(devices=[]), one_thread():
        torch.manual_seed(seed)
        model = GatedNet()
        parts = {
            "embed": list(model.embed.parameters()),
            "body": list(model.body.parameters()),
            "gain": [model.gain],
            "head": list(model.head.parameters()),
        }
        # Two param groups, as fine-tuning sets them up: the head learns at its own rate.
        groups: list[dict[str, Any]] = [
            {"params": parts["embed"] + parts["body"] + parts["gain"]},
            {"params": parts["head"], "lr": 1e-3},
        ]
        if fault == "left-out":  # the optimizer is built without one part of the model
            skipped = {id(p) for p in parts[{"embed": "gain"}.get(layer, layer)]}
            groups = [
                {**group, "params": [p for p in group["params"] if id(p) not in skipped]}
                for group in groups
            ]
        optimizer = torch.optim.SGD(groups, lr=1e-2, momentum=0.9)
        if fault == "frozen":  # frozen after the optimizer was built: it still holds them
            getattr(model, layer).requires_grad_(False)
        if fault == "nan-grad":
            negative = torch.randperm(HIDDEN, generator=generator)[: 1 + seed % 3]
            with torch.no_grad():
                model.gain[negative] = -model.gain[negative]
        if fault == "zeroed-detached":  # an earlier step's gradients, zeroed in place
            F.cross_entropy(model(features), labels).backward()  # type: ignore[no-untyped-call]
            optimizer.zero_grad(set_to_none=False)
        if fault in ("detached", "zeroed-detached"):
            model.detach_after = "body" if layer == "head" else layer
        loss = F.cross_entropy(model(features), labels)
        loss.backward()  # type: ignore[no-untyped-call]
    return Problem(model, optimizer, loss)


def encode_row(
    requires_grad: bool, in_optimizer: bool, grad: str, norm: float | None
) -> list[float]:
    """One audit row as COLUMNS lays it out (a missing norm: "norm given" 0, grad_norm 0)."""
    given = norm is not None
    value = float(norm) if norm is not None else 0.0
    return [
        float(requires_grad),
        float(in_optimizer),
        float(STATES.index(grad)),
        float(given),
        value,
    ]
