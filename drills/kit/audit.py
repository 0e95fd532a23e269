"""Probes shared by drills: the per-parameter health audit and gradient norms."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import torch
from torch import nn

GradState = Literal["none", "zero", "finite", "nonfinite"]


class ParameterAudit:
    """Answers, per parameter: does it get a gradient, is it optimized, did it actually move?

    Create it before training (it snapshots the initial weights), call `after_backward()` after
    each `loss.backward()`, and read `rows()` at the end.
    """

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> None:
        self._parameters = dict(model.named_parameters())
        self._initial = {name: p.detach().clone() for name, p in self._parameters.items()}
        optimized = {id(p) for group in optimizer.param_groups for p in group["params"]}
        self._in_optimizer = {name: id(p) in optimized for name, p in self._parameters.items()}
        self._grad_state: dict[str, GradState] = dict.fromkeys(self._parameters, "none")
        self._grad_norm: dict[str, float | None] = dict.fromkeys(self._parameters)

    def after_backward(self) -> None:
        for name, parameter in self._parameters.items():
            state, norm = grad_state(parameter.grad)
            self._grad_state[name] = state
            self._grad_norm[name] = norm

    def rows(self) -> list[dict[str, Any]]:
        rows = []
        for name, parameter in self._parameters.items():
            initial = self._initial[name]
            weight_norm = float(initial.norm())
            update_norm = float((parameter.detach() - initial).norm())
            rows.append(
                {
                    "name": name,
                    "requires_grad": parameter.requires_grad,
                    "in_optimizer": self._in_optimizer[name],
                    "grad": self._grad_state[name],
                    "grad_norm": self._grad_norm[name],
                    "update_norm": update_norm,
                    "weight_norm": weight_norm,
                    "update_ratio": update_norm / weight_norm if weight_norm > 0 else None,
                }
            )
        return rows


def grad_state(grad: torch.Tensor | None) -> tuple[GradState, float | None]:
    """Classify a gradient; the norm is None when there is none or it is not finite."""
    if grad is None:
        return "none", None
    if not bool(torch.isfinite(grad).all()):
        return "nonfinite", None
    norm = float(grad.norm())
    return ("zero" if norm == 0.0 else "finite"), norm


def total_grad_norm(parameters: Iterable[nn.Parameter]) -> float:
    """The L2 norm of all gradients together, as `clip_grad_norm_` would measure it."""
    squares = [p.grad.detach().pow(2).sum() for p in parameters if p.grad is not None]
    if not squares:
        return 0.0
    return float(torch.stack(squares).sum().sqrt())


def relative_weight_change(rows: Iterable[dict[str, Any]]) -> float | None:
    """How far the whole model moved: ||final - initial|| / ||initial|| over all parameters."""
    rows = list(rows)
    update = math.sqrt(sum(row["update_norm"] ** 2 for row in rows))
    weight = math.sqrt(sum(row["weight_norm"] ** 2 for row in rows))
    return update / weight if weight > 0 else None
