"""What a run of "Hunt the NaN" reports (torch-free, so the description can name it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class NanHuntSignature(Signature):
    # The first non-finite tensor; all None when every tensor stayed finite.
    first_nonfinite_stage: str | None = None  # data, activation, loss, gradient or parameter
    first_nonfinite_name: str | None = None  # e.g. "features", "log_probs", "head.weight"
    first_nonfinite_step: int | None = None
    first_nonfinite_kind: str | None = None  # "nan" or "inf"
    nonfinite_elements: int | None = None  # how many of its elements are non-finite
    tensor_elements: int | None = None  # of how many
    loss_at_finding: float | None = None  # the (finite) loss when only gradients/weights broke
    steps_completed: int | None = None
    initial_loss: float | None = None
    final_loss: float | None = None  # mean of the last 10% of steps; None if training stopped
    weight_growth: float | None = None  # largest weight norm / the initial one
    max_logit_gap: float | None = None  # largest top-minus-bottom logit gap seen
    log_underflow_gap: float | None = None  # the gap at which exp() rounds to 0 in float32
    unusual_batch_step: int | None = None  # the step whose batch holds an empty sequence
