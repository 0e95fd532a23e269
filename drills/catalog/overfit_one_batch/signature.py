"""What a run of "Overfit a single batch" reports (torch-free, so the description can name it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class OverfitSignature(Signature):
    examples: int | None = None
    # Rows of the prediction the loss is given: one per example, or 1 when the output is pooled
    # over the batch.
    prediction_rows: int | None = None
    supervised_targets: int | None = None  # None when a score is regressed (no class targets)
    steps_run: int | None = None
    initial_loss: float | None = None
    final_loss: float | None = None  # mean of the last 10% of steps
    min_loss: float | None = None
    peak_loss: float | None = None  # the highest loss of the run: did it blow up on the way?
    loss_noise: float | None = None  # spread of the last 10% of steps
    eval_loss: float | None = None  # the final weights in eval mode on the clean batch
    # Two more eval-mode passes over the clean batch gave the same outputs, bit for bit.
    eval_repeatable: bool | None = None
    final_p_correct: float | None = None
    chance_loss: float | None = None  # ln(classes): a model that knows nothing
    label_entropy: float | None = None  # where shuffled labels settle
    target_variance: float | None = None  # where a broadcast target settles
    weight_change: float | None = None  # ||final - initial|| / ||initial||
    nonfinite_step: int | None = None
    raw_loss_finite: bool | None = None  # all-padding: is the 0/0 loss finite?
    # Is the fixed batch fixed? Each counted bit for bit against the first step's
    # (drills/catalog/overfit_one_batch/fixed_batch.py):
    batch_changed_steps: int | None = None  # steps whose held batch (the dict) had changed
    first_batch_change: int | None = None  # the first such step
    changed_tensors: str | None = None  # which of the batch's tensors changed ("features, labels")
    input_changed_steps: int | None = None  # steps whose model input differed
    rng_changed_steps: int | None = None  # steps starting from another random state
    inputs_augmented: bool | None = None  # the model's input is not the batch itself (noise)
    # ||held features at the end - the batch as loaded|| / ||the batch as loaded||
    batch_drift: float | None = None
    loader_calls: int | None = None  # counted where the loop calls its loader
