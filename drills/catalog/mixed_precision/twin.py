"""The float32 twin every step of "Mixed precision" is checked against: the same model, set to
the same weights, takes the step the loop means to take on the same batch, in float32 and with
nothing to scale; and the flat vectors the two steps are compared as."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn


@dataclass(frozen=True)
class ReferenceStep:
    grad: torch.Tensor  # the float32 gradient, before clipping, flattened
    update: torch.Tensor  # the step the weights took, flattened


def float32_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    x: torch.Tensor,
    y: torch.Tensor,
    max_norm: float | None,
) -> ReferenceStep:
    """The step the loop means to take, in float32 and with nothing to unscale (clipped at
    `max_norm` unless it is None)."""
    optimizer.zero_grad(set_to_none=True)
    F.mse_loss(model(x), y).backward()  # type: ignore[no-untyped-call]
    parameters = stepped(optimizer)
    grad = flat_grad(parameters)
    if max_norm is not None:
        nn.utils.clip_grad_norm_(parameters, max_norm)
    before = flat_weights(parameters)
    optimizer.step()
    return ReferenceStep(grad=grad, update=flat_weights(parameters) - before)


def stepped(optimizer: torch.optim.Optimizer) -> list[nn.Parameter]:
    """The parameters the optimizer steps: the model's, all in its one group."""
    parameters: list[nn.Parameter] = optimizer.param_groups[0]["params"]
    return parameters


def flat_grad(parameters: list[nn.Parameter]) -> torch.Tensor:
    """Every parameter's gradient in one float64 vector."""
    return torch.cat([p.grad.detach().double().flatten() for p in parameters])  # type: ignore[union-attr]


def flat_weights(parameters: list[nn.Parameter]) -> torch.Tensor:
    return torch.cat([p.detach().double().flatten() for p in parameters])


def norm(vector: torch.Tensor) -> float:
    return float(vector.norm())


def cosine(a: torch.Tensor, b: torch.Tensor) -> float | None:
    both = norm(a) * norm(b)
    return float(a.dot(b)) / both if both > 0 else None
