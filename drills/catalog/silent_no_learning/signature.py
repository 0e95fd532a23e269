"""What a run of "The loop runs, nothing learns" reports (torch-free, so the description can
name it). Counts are of parameter tensors (a layer's weight and bias count as two)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class SilentSignature(Signature):
    parameters: int | None = None  # parameter tensors in the model
    frozen: int | None = None  # tensors with requires_grad=False
    grad_none: int | None = None  # tensors whose .grad is None after the last backward
    grad_finite: int | None = None  # tensors with a finite, non-zero gradient after it
    moved: int | None = None  # tensors that differ from their initial value at the end
    moved_share: float | None = None  # moved / parameters
    loss_has_grad_fn: bool | None = None  # did every step's loss come out of the graph?
    # steps whose backward found .grad still holding an earlier step's gradient (not cleared)
    stale_grad_steps: int | None = None
    grad_norm_growth: float | None = None  # total grad norm: last 10% of steps / first 10%
    initial_loss: float | None = None
    final_loss: float | None = None  # mean of the last 10% of steps
    max_loss: float | None = None  # the highest loss of the run (a blow-up can settle back)
    steps_run: int | None = None
    nonfinite_step: int | None = None  # first step whose loss or gradient was not finite
