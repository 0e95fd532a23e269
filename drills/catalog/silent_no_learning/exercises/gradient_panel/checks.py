"""Runs outside the sandbox: what the learner's loop did to the weights, measured against plain
SGD replayed here. Nothing the loop reports is read (its gradient panel least of all).

- every-parameter-moves: each parameter's change over the whole run, relative to its size,
  from the initial weights rebuilt here from the seed (evidence.MOVED_AT_LEAST). When none
  moved, the message adds what the judge's own backward gives at those weights: a finite,
  non-zero gradient for every parameter, so the steps had something to follow.
- own-batch-steps: the weights after the short run (the first two batches) against two steps
  of plain SGD at the rate handed to train(), each on its own batch's gradient, replayed here
  in float64 (problem.replay). ||your change - SGD's|| / ||SGD's change||.
- loss-falls: the whole training set's cross-entropy at the trained weights over the same at
  the initial weights.

Thresholds, from the reference, two other right loops and four wrong ones on seeds 0-4 (two
hidden runs each; tests/exercises/test_silent_no_learning_fixes.py):
- STEP_TOLERANCE (1e-4): right loops differ from the float64 replay by 2.5e-6 to 4.0e-6
  (float32 rounding over two steps), 25 times under the band. The loop that never clears is
  off by 0.49-0.74 (its second step follows the sum of both gradients), and the loops whose
  steps get no gradient by exactly 1 (they do not move).
- FALLS_TO (0.6): right loops end at 0.19-0.27 of the first loss; the loop that never clears
  at 0.45-0.95 (at this rate it may still learn: the step check is what rejects it on every
  seed); a loop whose steps get no gradient at exactly 1.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.silent_no_learning.exercises.gradient_panel.problem import (
    CONFIG,
    SHORT,
    Problem,
    build,
    gradients,
    loaded,
    replay,
    set_loss,
)
from drills.catalog.silent_no_learning.signature import SilentSignature
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    listed,
    missing_evidence,
    relative_changes,
    result,
    still,
    weights_check,
)
from drills.exercises.tensors import check_against

STEP_TOLERANCE = 1e-4  # ||your two steps - SGD's|| / ||SGD's two steps||
FALLS_TO = 0.6  # the trained loss over the initial loss, on the whole training set
STILL = 1e-12  # a change this small (relative) is no change: the weights came back as sent


@dataclass(frozen=True)
class StepReading:
    off: float  # ||your change - SGD's|| / ||SGD's change||
    off_summed: float  # the same against SGD on the running sum of gradients (never cleared)
    length: float  # ||your change|| / ||SGD's change||


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(seed).model.state_dict())


def flat(weights: dict[str, torch.Tensor], names: Sequence[str]) -> torch.Tensor:
    return torch.cat([weights[name].double().flatten() for name in names])


def read_steps(case: CaseEvidence, problem: Problem) -> StepReading | str:
    """The short run's change against plain SGD's two steps, or why it cannot be read."""
    stepped = case.values or {}
    problem_text = check_against(stepped, case.initial)
    if problem_text:
        return f"in {case.label}, the weights after two steps did not come back ({problem_text})"
    names = sorted(case.initial)
    start = flat(case.initial, names)
    change = flat(stepped, names) - start
    batches = problem.batches[:SHORT]
    fresh = flat(replay(case.initial, batches), names) - start
    summed = flat(replay(case.initial, batches, cleared=False), names) - start
    size = float(fresh.norm()) or 1.0  # SGD's two steps are never 0 here: no division by it
    return StepReading(
        off=float((change - fresh).norm()) / size,
        off_summed=float((change - summed).norm()) / size,
        length=float(change.norm()) / size,
    )


def steps_finding(label: str, reading: StepReading) -> str | None:
    """What is wrong with the two steps, in the learner's terms; None when they are SGD's."""
    if reading.off <= STEP_TOLERANCE:
        return None
    if reading.length <= STILL:
        return (
            f"in {label}, two steps of your loop left every weight where it was; plain SGD at "
            "the rate train() is given moves them"
        )
    if reading.off_summed <= STEP_TOLERANCE:
        return (
            f"in {label}, your second step is plain SGD's on the first batch's gradient plus "
            "the second's: the first step's gradient was still there when the second backward "
            "added to it"
        )
    return (
        f"in {label}, two steps of your loop moved the weights {reading.length:.3g} times as far "
        f"as two plain SGD steps at the rate train() is given, and they differ from them by "
        f"{reading.off:.3g} of their length"
    )


def moves_check(exercise: Exercise, cases: Sequence[CaseEvidence]) -> CheckResult:
    key = "every-parameter-moves"
    stuck: dict[str, list[str]] = {}
    for case in cases:
        assert case.weights is not None
        changes = relative_changes(case.weights, case.initial)
        stuck[case.label] = still(changes, sorted(changes))
    if not any(stuck.values()):
        return result(exercise, key, "pass", "Every parameter moved in every hidden run.")
    label, names = max(stuck.items(), key=lambda item: len(item[1]))
    if len(names) == len(cases[0].initial):
        case = next(case for case in cases if case.label == label)
        given = sum(finite_gradients(case.initial, build(case.seed)).values())
        text = (
            f"In {label}, not one parameter moved in {CONFIG.steps} steps, though the judge's "
            f"own backward at those weights gives {given} of the {len(names)} a finite, "
            "non-zero gradient: the steps never received it"
        )
    else:
        text = f"In {label}, {listed(names)} did not move in {CONFIG.steps} steps"
    return result(exercise, key, "fail", text + ".")


def finite_gradients(weights: dict[str, torch.Tensor], problem: Problem) -> dict[str, bool]:
    """Per parameter: is the first batch's gradient at `weights` finite and non-zero?"""
    found = gradients(loaded(weights), problem.batches[0])
    return {n: bool(g.isfinite().all()) and bool(g.abs().sum() > 0) for n, g in found.items()}


def falls_check(exercise: Exercise, ratios: dict[str, float]) -> CheckResult:
    key = "loss-falls"
    label, worst = max(ratios.items(), key=lambda item: item[1])
    if worst <= FALLS_TO:
        return result(
            exercise,
            key,
            "pass",
            f"In every hidden run the trained loss ends at {worst:.0%} of its start or below.",
        )
    text = (
        f"In {label}, the training loss of your trained weights is {worst:.0%} of where it "
        f"started; a loop that learns ends under {FALLS_TO:.0%} of it"
    )
    return result(exercise, key, "fail", text + ".")


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    findings: list[str] = []
    readings: dict[str, StepReading] = {}
    for case in cases:
        if case.error:
            continue
        reading = read_steps(case, build(case.seed))
        if isinstance(reading, str):
            findings.append(reading)
            continue
        readings[case.label] = reading
        measurements[f"two steps off SGD's ({case.label})"] = reading.off
        found = steps_finding(case.label, reading)
        findings += [found] if found else []

    broken = [case for case in cases if case.weights is None]
    if broken:
        checks.append(missing_evidence(exercise, "every-parameter-moves", broken))
    else:
        checks.append(moves_check(exercise, cases))
    errored = [case for case in cases if case.error]
    if errored:
        checks.append(missing_evidence(exercise, "own-batch-steps", errored))
    else:
        passed = "In every hidden run, two steps of your loop are plain SGD's, to float rounding."
        checks.append(findings_check(exercise, "own-batch-steps", findings, passed))
    if broken:
        checks.append(missing_evidence(exercise, "loss-falls", broken))
        return Assessment(checks, measurements)

    ratios: dict[str, float] = {}
    for case in cases:
        assert case.weights is not None
        data = build(case.seed).data
        ratios[case.label] = set_loss(case.weights, data) / set_loss(case.initial, data)
        measurements[f"trained loss / first loss ({case.label})"] = ratios[case.label]
    checks.append(falls_check(exercise, ratios))
    first = cases[0]
    return Assessment(checks, measurements, signature_of(first, readings.get(first.label)))


def signature_of(case: CaseEvidence, reading: StepReading | None) -> SilentSignature:
    """The drill's signature of one run, from what was measured here. Whether a loss had a
    grad_fn, which tensors required a gradient and what .grad held inside the loop are states no
    weight shows: they stay None. grad_finite counts the judge's own gradients at the trained
    weights; stale_grad_steps is 1 when the second step is the one a never-cleared .grad takes
    (at least that step found an earlier gradient), 0 when it is SGD's own."""
    assert case.weights is not None
    problem = build(case.seed)
    changes = relative_changes(case.weights, case.initial)
    moved = len(changes) - len(still(changes, changes))
    stale = None
    if reading is not None and reading.off <= STEP_TOLERANCE:
        stale = 0
    elif reading is not None and reading.off_summed <= STEP_TOLERANCE:
        stale = 1
    initial = set_loss(case.initial, problem.data)
    final = set_loss(case.weights, problem.data)
    return SilentSignature(
        parameters=len(changes),
        grad_finite=sum(finite_gradients(case.weights, problem).values()),
        moved=moved,
        moved_share=moved / len(changes),
        stale_grad_steps=stale,
        initial_loss=initial,
        final_loss=final,
        max_loss=max(initial, final),
    )
