"""A SELU activation written by hand as a `torch.autograd.Function`, and the check of its backward
against central finite differences.

    selu(x) = λ x                 for x > 0
              λ α (exp(x) - 1)    for x ≤ 0
    selu'(x) = λ                  for x > 0
               λ α exp(x)         for x ≤ 0

A hand-written backward is code like any other: the chain rule is easy to slip on, and nothing
fails loudly when it does, because any tensor of the right shape is accepted as a gradient.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from drills.catalog.gradient_check.variants import BACKWARDS

SCALE = 1.0507009873554805  # λ, as in torch.nn.SELU
ALPHA = 1.6732632423543772  # α


class HandWrittenSELU(torch.autograd.Function):
    """SELU with a hand-written backward; `backward_variant` picks the right one or a slip."""

    @staticmethod
    def forward(ctx: Any, x: torch.Tensor, backward_variant: str) -> torch.Tensor:
        if backward_variant not in BACKWARDS:
            raise ValueError(f"unknown backward {backward_variant!r}")
        ctx.save_for_backward(x)
        ctx.backward_variant = backward_variant
        return SCALE * torch.where(x > 0, x, ALPHA * torch.expm1(x))

    @staticmethod
    def backward(ctx: Any, grad_output: torch.Tensor) -> tuple[torch.Tensor, None]:
        (x,) = ctx.saved_tensors
        positive = torch.full_like(x, SCALE)
        negative = SCALE * ALPHA * torch.exp(x)
        if ctx.backward_variant == "missing-scale":
            positive = torch.ones_like(x)  # "the derivative of x is 1", forgetting the λ
        elif ctx.backward_variant == "flipped-sign":
            negative = -negative  # a sign lost on one branch only
        # One gradient per forward input: none for the variant's name.
        return grad_output * torch.where(x > 0, positive, negative), None


def hand_written_selu(backward_variant: str) -> Callable[[torch.Tensor], torch.Tensor]:
    def selu(x: torch.Tensor) -> torch.Tensor:
        return HandWrittenSELU.apply(x, backward_variant)  # type: ignore[no-untyped-call,no-any-return]

    return selu


def check_inputs(generator: torch.Generator, shape: tuple[int, int] = (6, 8)) -> torch.Tensor:
    """Float64 inputs on both branches, kept at least 0.05 from the kink at 0, where the function
    has no derivative and finite differences straddling it would mean nothing."""
    magnitude = 0.05 + torch.randn(shape, generator=generator, dtype=torch.float64).abs()
    sign = torch.where(torch.rand(shape, generator=generator) < 0.5, -1.0, 1.0)
    return (sign * magnitude).to(torch.float64)


@dataclass(frozen=True)
class GradientComparison:
    inputs: torch.Tensor  # (the checked point)
    analytic: torch.Tensor  # what the hand-written backward says
    numeric: torch.Tensor  # central finite differences
    relative_error: torch.Tensor  # |analytic - numeric| / max(|analytic|, |numeric|), per element


def compare_with_finite_differences(
    function: Callable[[torch.Tensor], torch.Tensor],
    x: torch.Tensor,
    weights: torch.Tensor,
    step: float = 1e-6,
) -> GradientComparison:
    """The gradient of the scalar sum(function(x) * weights), by backward and by central
    differences, one input element at a time: (L(x + h e_i) - L(x - h e_i)) / 2h."""

    point = x.detach().clone().requires_grad_(True)
    (analytic,) = torch.autograd.grad((function(point) * weights).sum(), point)
    numeric = torch.zeros_like(x)
    with torch.no_grad():
        for i in range(x.numel()):
            nudge = torch.zeros_like(x).view(-1)
            nudge[i] = step
            nudge = nudge.view_as(x)
            # L(x + h e_i) - L(x - h e_i), summed after subtracting: the other elements cancel
            # exactly instead of adding the rounding of a large sum to a small difference.
            change = (function(x + nudge) - function(x - nudge)) * weights
            numeric.view(-1)[i] = change.sum() / (2 * step)
    scale = torch.maximum(analytic.abs(), numeric.abs()).clamp_min(1e-12)
    return GradientComparison(x, analytic, numeric, (analytic - numeric).abs() / scale)


def passes_gradcheck(function: Callable[[torch.Tensor], torch.Tensor], x: torch.Tensor) -> bool:
    """torch's own finite-difference check of the same function at the same point."""
    point = x.detach().clone().requires_grad_(True)
    return bool(torch.autograd.gradcheck(function, (point,), eps=1e-6, raise_exception=False))
