"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside): the drills' backbone + head classifier on its batch, an
optimizer (some runs a few steps in, so it carries momentum), loss.backward() already run, and
the name of the parameter asked about. The seed picks the parameter and the learning rate."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.kit.backbone_head import BackboneAndHead, BackboneHeadConfig, Data, make_data

CONFIG = BackboneHeadConfig()
WARM_STEPS = 3  # steps taken before the one measured, where the optimizer carries state
# What each hidden run is, in the order of the exercise's cases.
SETUPS = ("sgd", "adam", "momentum", "not-held", "at-zero")
WEIGHTS = ("backbone.0.weight", "backbone.2.weight", "head.weight")
BIASES = ("backbone.0.bias", "backbone.2.bias", "head.bias")


@dataclass
class Problem:
    model: BackboneAndHead
    optimizer: torch.optim.Optimizer
    name: str  # the parameter whose update is asked for
    data: Data


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: the same bits on both sides of the wall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def log_uniform(low: float, high: float, generator: torch.Generator) -> float:
    exponent = low + (high - low) * float(torch.rand(1, generator=generator))
    return float(10.0**exponent)


def build(setup: str, seed: int) -> Problem:
    """The model with its gradients in .grad, just before the step the learner measures."""
    generator = torch.Generator().manual_seed(seed)
    data = make_data(CONFIG, generator)
    pick = int(torch.randint(len(WEIGHTS), (1,), generator=generator))
    name = BIASES[pick] if setup == "at-zero" else WEIGHTS[pick]
    with torch.random.fork_rng(devices=[]), one_thread():
        torch.manual_seed(seed)
        model = BackboneAndHead(CONFIG)
        parameters = dict(model.named_parameters())
        if setup == "at-zero":
            nn.init.zeros_(parameters[name])  # a bias initialised at zero, as many are
        held = [p for n, p in parameters.items() if setup != "not-held" or n != name]
        optimizer: torch.optim.Optimizer
        if setup == "adam":
            optimizer = torch.optim.Adam(held, lr=log_uniform(-3.5, -2.0, generator))
        elif setup in ("momentum", "not-held"):
            lr = log_uniform(-2.0, -1.0, generator)
            optimizer = torch.optim.SGD(held, lr=lr, momentum=0.9, weight_decay=1e-2)
        else:
            optimizer = torch.optim.SGD(held, lr=log_uniform(-1.5, -0.3, generator))
        for _ in range(WARM_STEPS if setup in ("adam", "momentum", "not-held") else 0):
            backward(model, optimizer, data)
            optimizer.step()
        backward(model, optimizer, data)
    return Problem(model, optimizer, name, data)


def backward(model: nn.Module, optimizer: torch.optim.Optimizer, data: Data) -> None:
    model.zero_grad(set_to_none=True)  # every parameter, held or not
    loss = F.cross_entropy(model(data.features), data.labels)
    loss.backward()  # type: ignore[no-untyped-call]
