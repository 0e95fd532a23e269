"""Runs outside the sandbox: the number the learner's function returned against the training
set's eval-mode loss computed here, the mode probe against both modes' outputs computed here,
and the weights that came back against the weights rebuilt here.

The drill's signature (ValBelowTrainSignature) of the first run: train_eval_loss is the
learner's number (the measurement under test); online_train_loss (the training set with
dropout on, a mean over fixed draws), val_loss (the validation set in eval mode), the gaps,
learned_share, the teacher's noise floors and chance_loss are measured here. The epoch-to-epoch
spreads and epochs describe a training curve this exercise does not have: they stay None.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import torch
import torch.nn.functional as F

from drills.catalog.val_below_train.exercises.eval_mode_remeasure.problem import (
    TASK,
    Problem,
    build,
    handed_in_train_mode,
    mode_probe,
    one_thread,
)
from drills.catalog.val_below_train.signature import ValBelowTrainSignature
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    listed,
    missing_evidence,
    result,
    weights_check,
)
from drills.kit.synthetic_classification import LabelledSet, noise_floor

TOLERANCE = 1e-4  # nats, plus the same share of the loss: float32 rounding, nothing more
PROBE_TOLERANCE = 1e-5
DROPOUT_DRAWS = 4  # train-mode losses measured here, to say where a dropout number falls


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(seed).model.state_dict())


def loss_in_mode(problem: Problem, data: LabelledSet, *, train: bool, seed: int = 0) -> float:
    model = problem.model
    with torch.random.fork_rng(devices=[]), one_thread(), torch.no_grad():
        torch.manual_seed(seed)
        model.train(train)
        return float(F.cross_entropy(model(data.features), data.labels))


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    numbers: list[CheckResult] = []
    values: list[CheckResult] = []
    modes: list[CheckResult] = []
    alone: list[CheckResult] = []
    signature = None
    for case in cases:
        problem = build(case.seed)
        reference = loss_in_mode(problem, problem.train_set, train=False)
        dropout = [
            loss_in_mode(problem, problem.train_set, train=True, seed=draw)
            for draw in range(DROPOUT_DRAWS)
        ]
        measurements[f"eval-mode loss ({case.label})"] = reference
        measurements[f"train-mode loss, mean of {DROPOUT_DRAWS} ({case.label})"] = statistics.fmean(
            dropout
        )
        returned = case.frames.value(case.case, "result")
        value = returned.value if returned is not None else None
        measurements[f"your number ({case.label})"] = value
        numbers.append(number_check(exercise, case, returned is not None, value, returned))
        values.append(value_check(exercise, case, value, reference, dropout))
        modes.append(mode_check(exercise, case, problem))
        alone.append(weights_alone_check(exercise, case))
        if signature is None and value is not None:
            signature = signature_of(problem, value, dropout)
    checks.extend(worst(group) for group in (numbers, values, modes, alone))
    return Assessment(checks, measurements, signature)


def worst(results: list[CheckResult]) -> CheckResult:
    """One line per check: the first run that did not pass, else the first run."""
    order = {"error": 0, "fail": 1, "pass": 2}
    return min(results, key=lambda r: order[r.status])


def number_check(
    exercise: Exercise, case: CaseEvidence, came: bool, value: float | None, returned: object
) -> CheckResult:
    key = "returns-a-number"
    if case.error:
        return missing_evidence(exercise, key, [case])
    if not came:
        return result(exercise, key, "fail", f"{case.label}: no returned value came back.")
    if value is None:
        what = getattr(returned, "returned", "something else")
        return result(
            exercise,
            key,
            "fail",
            f"{case.label}: your function returned {what}, not a finite number.",
        )
    return result(exercise, key, "pass", "Your function returned a plain number every time.")


def value_check(
    exercise: Exercise,
    case: CaseEvidence,
    value: float | None,
    reference: float,
    dropout: list[float],
) -> CheckResult:
    key = "eval-mode-loss"
    if case.error or value is None:
        return (
            missing_evidence(exercise, key, [case])
            if case.error
            else result(exercise, key, "fail", f"{case.label}: there is no number to compare.")
        )
    if abs(value - reference) <= TOLERANCE * (1 + abs(reference)):
        return result(exercise, key, "pass", "Your number matches the judge's measurement.")
    side = "higher" if value > reference else "lower"
    message = (
        f"{case.label}: your number is {side} than the training set's loss measured like "
        "validation, by more than rounding can explain."
    )
    low, high = min(dropout), max(dropout)
    spread = high - low
    if low - spread <= value <= high + spread:
        message += " It falls where losses measured with dropout still active fall."
    return result(exercise, key, "fail", message)


def mode_check(exercise: Exercise, case: CaseEvidence, problem: Problem) -> CheckResult:
    key = "restores-the-mode"
    if case.error:
        return missing_evidence(exercise, key, [case])
    probe = (case.values or {}).get("probe")
    model = problem.model
    if case.weights is not None:  # the mode alone: a weight the code changed is another check
        model.load_state_dict(case.weights)
    model.train()
    in_train = mode_probe(model, problem, case.seed)
    model.eval()
    in_eval = mode_probe(model, problem, case.seed)
    if probe is None or probe.shape != in_train.shape or probe.dtype != in_train.dtype:
        return result(exercise, key, "fail", f"{case.label}: the mode probe did not come back.")
    came_in_train = handed_in_train_mode(case.case)
    left_in_train = torch.allclose(probe, in_train, atol=PROBE_TOLERANCE, rtol=0)
    left_in_eval = torch.allclose(probe, in_eval, atol=PROBE_TOLERANCE, rtol=0)
    if left_in_train if came_in_train else left_in_eval:
        return result(
            exercise, key, "pass", "The model was left in the mode it came in, every time."
        )
    if left_in_eval:
        return result(
            exercise,
            key,
            "fail",
            f"{case.label}: after your function returned, the model behaved as it does in "
            "eval mode, so the training that carries on would run with dropout off.",
        )
    if left_in_train:
        return result(
            exercise,
            key,
            "fail",
            f"{case.label}: the model came in eval mode, as a validation routine hands it "
            "over, and your function left it in train mode, so what runs after it would run "
            "with dropout on. Put back the mode the model came in, not always train mode.",
        )
    return result(
        exercise,
        key,
        "fail",
        f"{case.label}: after your function returned, the model's outputs matched neither "
        "its train mode nor its eval mode.",
    )


def weights_alone_check(exercise: Exercise, case: CaseEvidence) -> CheckResult:
    key = "leaves-weights-alone"
    if case.weights is None:
        return missing_evidence(exercise, key, [case])
    changed = [
        name
        for name, start in case.initial.items()
        if not torch.allclose(case.weights[name], start, atol=1e-6, rtol=1e-6)
    ]
    if changed:
        return result(
            exercise,
            key,
            "fail",
            f"{case.label}: {listed(changed)} changed while your function ran; a measurement "
            "must leave the weights exactly as it found them.",
        )
    return result(exercise, key, "pass", "Every weight came back as it was.")


def signature_of(problem: Problem, value: float, dropout: list[float]) -> ValBelowTrainSignature:
    online = statistics.fmean(dropout)
    val = loss_in_mode(problem, problem.val_set, train=False)
    floor, chance = noise_floor(problem.train_set), math.log(TASK.classes)
    return ValBelowTrainSignature(
        train_examples=len(problem.train_set),
        val_examples=len(problem.val_set),
        online_train_loss=online,
        train_eval_loss=value,
        val_loss=val,
        online_gap=online - value,
        val_gap=val - value,
        val_below_online=online - val,
        learned_share=(chance - value) / (chance - floor),
        noise_floor=noise_floor(problem.val_set),
        train_noise_floor=floor,
        chance_loss=chance,
    )
