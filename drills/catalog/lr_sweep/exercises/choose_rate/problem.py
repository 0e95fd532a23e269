"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The data are the drill's own (drills/catalog/lr_sweep/
problem.py: 64 examples, 8 features, targets 2 tanh(x . w) plus noise) and the model its tanh
MLP; each hidden run picks a width and the units of the targets, which move the rate at which
plain gradient descent stops training by a factor of thirty to a hundred (see checks.py).

`sgd_curve` is the judge's own training run: plain full-batch SGD, the drill's loop, recording
the loss before every step.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace

import torch
import torch.nn.functional as F

from drills.catalog.lr_sweep.problem import SweepConfig, TanhMLP, make_problem
from drills.catalog.lr_sweep.verdicts import SPIKE_ABOVE

STEPS = SweepConfig().steps  # 150 full-batch steps, as in the drill
# What choose_lr() is offered, smallest first: about a factor of 3 apart, from a rate that
# leaves the loss where it is to one that overflows on every hidden run.
CANDIDATES = (1e-4, 3e-4, 1e-3, 3e-3, 0.01, 0.03, 0.1, 0.3, 1.0, 3.0)


@dataclass(frozen=True)
class Setup:
    hidden: int  # units of each hidden layer
    target_units: float  # the drill's targets times this (metres to centimetres: 100)


# One per hidden run, in the order of the exercise's cases. Measured on 40 and 12 seeds: the
# drill's network trains best at 0.1-0.3 and blows up at 1 on every seed; the wider one on
# targets in centimetres trains best at 3e-3 and, on 11 seeds in 12, jumps up at 0.01 within
# 3-8 steps.
SETUPS = (Setup(hidden=32, target_units=1.0), Setup(hidden=128, target_units=100.0))


@dataclass(frozen=True)
class Problem:
    x: torch.Tensor  # (64, 8) float32: the whole training set, the batch of every step
    y: torch.Tensor  # (64, 1) float32
    model: TanhMLP  # at its initial weights, fixed by the seed


@dataclass(frozen=True)
class Curve:
    """One judge's run: the loss before each step, up to the first non-finite one."""

    lr: float
    losses: list[float]
    nonfinite_step: int | None  # where the loss overflowed and the run stopped
    cut: bool  # stopped early once the loss stood SPIKE_ABOVE times its start


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: the same bits on both sides of the wall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def build(case: int, seed: int) -> Problem:
    setup = SETUPS[case]
    config = replace(SweepConfig(), hidden=setup.hidden)
    x, y = make_problem(config, torch.Generator().manual_seed(seed))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TanhMLP(config)
    return Problem(x, y * setup.target_units, model)


def fresh_model(problem: Problem) -> TanhMLP:
    """A new copy of the model at the problem's initial weights."""
    return copy.deepcopy(problem.model)


def sgd_curve(problem: Problem, lr: float, *, cut_at_spike: bool = False) -> Curve:
    """Plain SGD at `lr` for STEPS steps on the whole set, from the initial weights. With
    `cut_at_spike` the run stops as soon as the loss passes SPIKE_ABOVE times its start: the
    drill already reads such a rate as unstable, whatever the loss does after."""
    model = fresh_model(problem)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses: list[float] = []
    with one_thread():
        for _ in range(STEPS):
            loss = F.mse_loss(model(problem.x), problem.y)
            value = loss.item()
            if not math.isfinite(value):
                return Curve(lr, losses, len(losses), cut=False)
            losses.append(value)
            if cut_at_spike and value > SPIKE_ABOVE * losses[0]:
                return Curve(lr, losses, None, cut=True)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
    return Curve(lr, losses, None, cut=False)


@torch.no_grad()
def loss_at(weights: dict[str, torch.Tensor], problem: Problem) -> float:
    """The whole set's mean squared error at `weights`, in float64 (weights that ran off have
    outputs whose float32 square would overflow)."""
    model = fresh_model(problem).double()
    model.load_state_dict({name: tensor.double() for name, tensor in weights.items()})
    with one_thread():
        return float(F.mse_loss(model(problem.x.double()), problem.y.double()))
