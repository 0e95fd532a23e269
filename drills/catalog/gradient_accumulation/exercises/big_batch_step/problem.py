"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The data are the drill's own least-squares problem
(drills/catalog/gradient_accumulation/problem.py); the model is its nn.Linear(8, 1)."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from drills.catalog.gradient_accumulation.problem import Regression, make_problem
from drills.catalog.gradient_accumulation.train import AccumulationConfig

CONFIG = AccumulationConfig()  # 512 examples, 8 features, micro-batches of 16, lr 0.16
MICRO_BATCHES = (1, 3, 8)  # k of each hidden run: 1 and 3 catch a k written into the code
STEPS = CONFIG.steps  # optimizer steps of a training run, as in the drill

Batch = tuple[torch.Tensor, torch.Tensor]


@dataclass(frozen=True)
class Problem:
    k: int  # micro-batches per optimizer step
    data: Regression  # the whole training set
    model: nn.Linear  # at its initial weights, fixed by the seed
    batches: list[Batch]  # STEPS * k micro-batches, in order: step s uses [s*k, (s+1)*k)


def build(case: int, seed: int) -> Problem:
    k = MICRO_BATCHES[case]
    data = make_problem(
        CONFIG.examples, CONFIG.features, CONFIG.noise, torch.Generator().manual_seed(seed)
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = nn.Linear(CONFIG.features, 1)
    order = torch.Generator().manual_seed(seed + 1)
    return Problem(k, data, model, micro_batches(data, STEPS * k, order))


def micro_batches(data: Regression, count: int, generator: torch.Generator) -> list[Batch]:
    """`count` micro-batches of CONFIG.micro_batch_size, drawn in order from shuffled epochs
    (as the drill draws them)."""
    size = CONFIG.micro_batch_size
    found: list[Batch] = []
    while len(found) < count:
        order = torch.randperm(len(data), generator=generator)
        for start in range(0, len(data) - size + 1, size):
            index = order[start : start + size]
            found.append((data.features[index], data.targets[index]))
    return found[:count]


def fresh_model(problem: Problem) -> nn.Linear:
    """A new model at the problem's initial weights."""
    model = nn.Linear(CONFIG.features, 1)
    model.load_state_dict(problem.model.state_dict())
    return model


def copies(batches: list[Batch]) -> list[Batch]:
    """The batches as new tensors: whatever the code does to them, the problem keeps its own."""
    return [(x.clone(), y.clone()) for x, y in batches]


def set_loss(weights: dict[str, torch.Tensor], data: Regression) -> float:
    """The whole training set's mean squared error at `weights`, in float64 (a run that blew up
    has weights whose float32 loss would overflow)."""
    weight, bias = weights["weight"].double(), weights["bias"].double()
    predictions = data.features.double() @ weight.T + bias
    return float((predictions - data.targets.double()).pow(2).mean())
