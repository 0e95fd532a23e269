"""What a run of "Optimizer membership" reports (torch-free, so the description can name it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class MembershipSignature(Signature):
    model_params: int | None = None  # parameter tensors the model uses now
    in_optimizer: int | None = None  # ... that the optimizer holds
    not_in_optimizer: int | None = None  # ... that it does not: they can never move
    stale_optimizer_tensors: int | None = None  # tensors it holds that the model no longer uses
    grad_but_no_update: int | None = None  # a finite, non-zero gradient and not one step
    backbone_grad_but_no_update: int | None = None
    head_grad_but_no_update: int | None = None
    backbone_update_norm: float | None = None  # L2 norm of the backbone's total change
    head_update_norm: float | None = None
    initial_loss: float | None = None
    final_loss: float | None = None  # mean of the last 10% of steps
    chance_loss: float | None = None  # ln(classes): a model that knows nothing
