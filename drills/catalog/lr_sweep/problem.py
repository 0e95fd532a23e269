"""The learning-rate sweep's problem: its config, the data, the model, the optimizer, and the
curvature probe that gives the stability limit."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch
from torch import nn


@dataclass(frozen=True)
class SweepConfig:
    examples: int = 64  # the whole data set is one batch: every step sees the same data
    features: int = 8
    hidden: int = 32
    steps: int = 150  # per rate
    noise: float = 0.1  # std of the noise added to the targets
    # Inputs of unit scale make the loss curved enough that plain gradient descent at a rate
    # of 1 overshoots and overflows, while 1e-2 is stable: the sweep brackets the limit.
    input_scale: float = 1.0
    power_iterations: int = 30  # for the sharpness estimate


class TanhMLP(nn.Module):
    def __init__(self, config: SweepConfig) -> None:
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(config.features, config.hidden),
            nn.Tanh(),
            nn.Linear(config.hidden, config.hidden),
            nn.Tanh(),
            nn.Linear(config.hidden, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)  # type: ignore[no-any-return]


def make_problem(
    config: SweepConfig, generator: torch.Generator
) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and targets from the run's data generator: every rate sees exactly this data."""
    x = config.input_scale * torch.randn(config.examples, config.features, generator=generator)
    teacher = torch.randn(config.features, 1, generator=generator) / math.sqrt(config.features)
    clean = 2.0 * torch.tanh(x @ teacher)
    y = clean + config.noise * torch.randn(config.examples, 1, generator=generator)
    return x, y


def make_optimizer(
    name: str, parameters: Sequence[nn.Parameter], lr: float
) -> torch.optim.Optimizer:
    if name == "adam":
        return torch.optim.Adam(parameters, lr=lr)
    return torch.optim.SGD(parameters, lr=lr)


def update_norm(before: Sequence[torch.Tensor], after: Sequence[torch.Tensor]) -> float:
    """L2 norm of the change of all parameters together: how big one optimizer step was."""
    change = torch.cat([(a - b).flatten() for a, b in zip(after, before, strict=True)])
    return float(torch.linalg.vector_norm(change))


def weights_norm(parameters: Sequence[torch.Tensor]) -> float:
    return float(torch.linalg.vector_norm(torch.cat([p.flatten() for p in parameters])))


def top_hessian_eigenvalue(
    loss_fn: Callable[[], torch.Tensor],
    parameters: Sequence[nn.Parameter],
    iterations: int,
    generator: torch.Generator,
) -> float:
    """The largest curvature of the loss (top Hessian eigenvalue), by power iteration.

    Each iteration multiplies a direction by the Hessian without ever building it (a second
    backward pass through the gradient); the direction turns towards the steepest curvature.
    Plain gradient descent on a quadratic with that curvature is stable only for lr < 2 / it.
    """
    direction = [torch.randn(p.shape, generator=generator) for p in parameters]
    eigenvalue = 0.0
    for _ in range(iterations):
        norm = math.sqrt(sum(float(d.pow(2).sum()) for d in direction))
        direction = [d / norm for d in direction]
        grads = torch.autograd.grad(loss_fn(), parameters, create_graph=True)
        hessian_times = torch.autograd.grad(grads, parameters, grad_outputs=direction)
        eigenvalue = sum(
            float((h * d).sum()) for h, d in zip(hessian_times, direction, strict=True)
        )
        direction = [h.detach() for h in hessian_times]
    return eigenvalue
