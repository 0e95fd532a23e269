"""Runs outside the sandbox: the loss of the weights that came back, on each hidden batch.

Every check reads the trained weights only, loaded into a model rebuilt here, on the batch
rebuilt here from the seed. The drill's signature (OverfitSignature) for the 5-example run is
filled from the same measurements: initial_loss (the rebuilt initial weights), final_loss and
eval_loss (both: the trained weights in eval mode, not the tail of a training curve),
final_p_correct, weight_change, label_entropy, chance_loss, examples and supervised_targets.
Fields read from a training curve (min_loss, peak_loss, loss_noise, steps_run, nonfinite_step)
stay None: the run's own curve is untrusted.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from drills.catalog.overfit_one_batch import FITS_BELOW
from drills.catalog.overfit_one_batch.exercises.shuffled_pairs.problem import (
    EXAMPLES,
    Problem,
    batch_loss,
    build,
    p_correct,
)
from drills.catalog.overfit_one_batch.setup import entropy_of_labels
from drills.catalog.overfit_one_batch.signature import OverfitSignature
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    missing_evidence,
    nats,
    result,
    total_change,
    weights_check,
)


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(case, seed).model.state_dict())


def trained_model(problem: Problem, weights: dict[str, torch.Tensor]) -> torch.nn.Module:
    problem.model.load_state_dict(weights)
    return problem.model


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    signature = None
    for case in cases:
        key = f"fits-{EXAMPLES[case.case]}"
        if case.weights is None:
            checks.append(missing_evidence(exercise, key, [case]))
            continue
        problem = build(case.case, case.seed)
        initial = batch_loss(problem.model, problem)
        model = trained_model(problem, case.weights)
        loss = batch_loss(model, problem)
        moved = total_change(case.weights, case.initial)
        measurements[f"loss ({case.label})"] = loss
        measurements[f"weight change ({case.label})"] = moved
        checks.append(fits(exercise, key, case.label, loss, moved))
        if EXAMPLES[case.case] == max(EXAMPLES):
            signature = OverfitSignature(
                examples=problem.config.examples,
                supervised_targets=problem.config.examples,
                initial_loss=initial,
                final_loss=loss,
                eval_loss=loss,
                final_p_correct=p_correct(model, problem),
                chance_loss=math.log(problem.config.classes),
                label_entropy=entropy_of_labels(problem.labels, problem.config.classes),
                weight_change=moved,
            )
    return Assessment(checks, measurements, signature)


def fits(exercise: Exercise, key: str, label: str, loss: float, moved: float) -> CheckResult:
    if loss < FITS_BELOW:
        return result(exercise, key, "pass", f"On {label} the trained loss is {nats(loss)}.")
    message = (
        f"On {label} the loss of your trained weights is still {nats(loss)}; a working loop "
        f"memorises a batch this small to under {FITS_BELOW:g} nats."
    )
    if moved < 0.05:
        message += " The weights hardly moved from where they started."
    return result(exercise, key, "fail", message)
