"""What a run of "Mixed precision" reports (torch-free, so the description can name it).

Every number comes from the run itself: the scale from the scaler's own get_scale() at each
step; a step counts as skipped when every parameter is bit for bit what it was before the step
(not because the scaler is expected to skip); the step and the gradient are compared with a
float32 twin that is set to the same weights and takes the same step on the same batch. The
step numbers are read at the first step the weights moved.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class MixedPrecisionSignature(Signature):
    # The scaler's scale (get_scale()): before the first step, at the end, and the lowest
    initial_scale: float | None = None
    final_scale: float | None = None
    lowest_scale: float | None = None
    steps_run: int | None = None
    skipped_steps: int | None = None  # steps after which every parameter was bit-identical
    skipped_share: float | None = None  # skipped_steps / steps_run
    first_skipped_step: int | None = None
    last_skipped_step: int | None = None
    # Cross-checks of the scaler's bookkeeping against the weights (0 when GradScaler behaves):
    skips_without_halving: int | None = None  # skipped steps after which the scale did not halve
    halvings_without_skip: int | None = None  # steps whose scale halved though the weights moved
    first_taken_step: int | None = None  # the first step after which the weights had moved
    # At that step:
    step_scale: float | None = None  # the scale the loss was multiplied by
    # ||the step the weights took|| / ||the step the float32 twin took from the same weights||
    update_ratio: float | None = None
    update_cosine: float | None = None  # 1: the two steps point the same way
    # The ratio clipping the still-scaled gradients at max_norm predicts, in closed form:
    # 1 / (scale x min(1, ||float32 gradient|| / max_norm))
    scaled_clip_ratio: float | None = None
    scaled_grad_norm: float | None = None  # ||.grad|| right after backward: scale x gradient
    unscaled_grad_norm: float | None = None  # that divided by the scale
    float32_grad_norm: float | None = None  # the twin's gradient, same weights and batch
    logged_grad_norm: float | None = None  # the norm the loop reads (and clips by) and logs
    norm_ratio: float | None = None  # logged_grad_norm / float32_grad_norm
    # ||gradient / scale - float32 gradient|| / ||float32 gradient||: float16 rounding
    grad_relative_diff: float | None = None
    median_update_ratio: float | None = None  # over every step the weights moved
    # The whole training set's loss (in float32) at the weights each step starts from:
    initial_loss: float | None = None  # before the first step
    final_loss: float | None = None  # mean of the last 10% of steps
    max_loss: float | None = None
    float32_final_loss: float | None = None  # the same loop run in float32 from the same weights
    nonfinite_step: int | None = None  # first step whose loss was not finite
