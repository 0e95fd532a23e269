"""One step of training, the same code for the real steps and the replays, and the clean loss
that measures what a step did to the model."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.loss_spikes.setup import Dataset
from drills.kit.audit import total_grad_norm


@dataclass
class StepResult:
    loss: float
    grad_norm: float  # before clipping; NaN when the loss was not finite (no backward ran)
    stepped: bool  # False: the loss or the gradient was not finite and no step was taken
    update_norm: float = math.nan  # how far the step moved the weights (L2 over all of them)


def update_share(update_norm: float, grad_norm: float, lr: float) -> float | None:
    """The update a step made over the one its raw gradient asked for (lr x gradient norm, in
    plain gradient descent): exactly 1 unless clipping scaled the gradient down."""
    asked = lr * grad_norm
    if not asked > 0 or not math.isfinite(update_norm):
        return None  # a rate or gradient of 0 asked for nothing
    return update_norm / asked


def train_step(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    inputs: torch.Tensor,
    labels: torch.Tensor,
    lr: float,
    clip: float,
    after_backward: Callable[[], None] | None = None,
) -> StepResult:
    """One step of training; `after_backward` is the run's audit hook (the replays pass none)."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    loss = F.cross_entropy(model(inputs), labels)
    if not math.isfinite(loss.item()):
        return StepResult(loss.item(), math.nan, stepped=False)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    if after_backward is not None:
        after_backward()
    grad_norm = total_grad_norm(model.parameters())  # before clipping: what the batch asked for
    if not math.isfinite(grad_norm):
        return StepResult(loss.item(), grad_norm, stepped=False)  # it would poison every weight
    if clip > 0:
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
    # Measured, not worked out from the clip: the weights before and after the step.
    before = [p.detach().clone() for p in model.parameters()]
    optimizer.step()
    with torch.no_grad():
        moved = sum(
            float((p - b).pow(2).sum()) for p, b in zip(model.parameters(), before, strict=True)
        )
    return StepResult(loss.item(), grad_norm, stepped=True, update_norm=math.sqrt(moved))


def clean_loss(model: nn.Module, data: Dataset) -> float:
    """Loss on every example with its correct label: what a step really did to the model."""
    with torch.no_grad():
        logits = model(data.inputs.flatten(0, 1))
        return float(F.cross_entropy(logits, data.true_labels.flatten()))
