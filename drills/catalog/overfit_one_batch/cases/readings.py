"""How the overfit-one-batch cases read an experiment's run: each reading boils what the
experiment shows down to a short key, and two causes whose keys differ are told apart by it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.overfit_one_batch import DRILL

NEAR_ZERO = 0.1  # the drill's own "memorised" line


def clean_remeasure(signature: Mapping[str, Any], error: str | None) -> str:
    """The final weights measured in eval mode on the clean batch, against the training loss."""
    final, clean = signature.get("final_loss"), signature.get("eval_loss")
    if final is None or clean is None:
        return "no-loss-to-measure"
    if final > NEAR_ZERO and clean < 0.5 * final:
        return "clean-far-below-training"
    return "clean-matches-training"


def loader_calls(signature: Mapping[str, Any], error: str | None) -> str:
    """How often the loop called its loader: once for the one batch, or at every step."""
    calls = signature.get("loader_calls")
    if calls is None:
        return "no-count"
    return "called-once" if calls == 1 else "called-again"


def what_the_loss_compares(signature: Mapping[str, Any], error: str | None) -> str:
    """What the loss is handed: class labels, numeric scores (one prediction per example or
    one for the whole batch), every label masked, or a batch with no example in it."""
    if signature.get("supervised_targets") == 0:
        return "no-example-in-batch" if signature.get("examples") == 0 else "every-target-masked"
    if signature.get("target_variance") is not None:
        pooled = signature.get("prediction_rows") == 1 and (signature.get("examples") or 0) > 1
        return "one-score-for-the-batch" if pooled else "one-score-per-example"
    return "class-labels"


def batch_against_first(signature: Mapping[str, Any], error: str | None) -> str:
    """Each step's batch, compared bit for bit with the first step's."""
    changed = signature.get("batch_changed_steps")
    if changed is None:
        return "no-steps"
    if changed == 0:
        return "same-at-every-step"
    # Which tensors changed: noise written into the features leaves the labels as they were; a
    # batch replaced by another changes its labels as well.
    tensors = signature.get("changed_tensors") or ""
    return "labels-change-too" if "labels" in tensors else "features-change"


def plateau_reading(signature: Mapping[str, Any], error: str | None) -> str:
    """The drill's reading of the run from its loss alone: the batch check left out, since the
    numbers this experiment shows (the plateau, the reference levels, the weights' movement)
    say nothing about whether the batch changed, nor whether eval mode repeats itself."""
    return DRILL.diagnose(
        {**signature, "batch_changed_steps": None, "eval_repeatable": None}, error
    )


def memorised_or_not(signature: Mapping[str, Any], error: str | None) -> str:
    final = signature.get("final_loss")
    if error is not None or final is None:
        return "run-stopped"
    return "near-zero" if final < NEAR_ZERO else "stays-above-zero"
