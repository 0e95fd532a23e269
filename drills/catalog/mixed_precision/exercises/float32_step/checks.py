"""Runs outside the sandbox: one step of the learner's loop against float32's, parameter by
parameter; the same step where the scaled gradients overflow float16; and the training-set loss
of the weights its training runs left behind. All measured here from the weights that came back.

The reference step is plain SGD at the starter's rate on the gradient clipped at norm 1,
computed here in float64 from the hidden run's initial weights on its first batch
(problem.float32_step). Nothing the learner's loop reports (its loss, its norm) is read.

Thresholds, from the reference solution, two other right loops and four wrong ones, judged on
seeds 0-4 (three hidden runs each; tests/exercises/test_mixed_precision_fixes.py):
- STEP_BAND (5%) on the largest ||your step - float32 step|| / ||float32 step|| over the four
  parameters. A right loop's steps differ from float32's by float16 rounding: 0.03-0.19% at
  the drill's problem, 0.16-0.6% under the quiet head, 8 times under the band. Clipping before
  the unscale leaves steps 1/scale of float32's (a difference of 1.0); dropping the scaler
  loses the quiet head's hidden-layer gradients to float16 (19-37% on its worst parameter);
  clipping at 1024 times the threshold gives 1/8 of the step at 2^13 (0.875); without
  clipping the quiet head's step is 1.17-1.59 times too long (17-59%).
- Skipped: every weight bit for bit as it was, at the run whose first scaled gradients leave
  float16's range by a factor of 4 or more (problem.overflows, decided here from the float64
  gradient). Every right loop skips there; a loop without the scaler takes float32's step.
- LEARNS_BY, the drill's (half the first loss): right loops end at 0.066-0.143 of it in every
  run; clipped before the unscale at 0.97-1.0; clipped at 1024 times the threshold at
  0.58-0.79 at 2^24 (the scale comes down to about 2^16 and stays there).

The drill's signature (MixedPrecisionSignature) is filled from the first run (2^10): the single
step against float32's (update_ratio, update_cosine, scaled_clip_ratio in closed form), the
norm the loop clipped by read off its step (a step clipped to norm lr x max_norm / n was clipped
by the norm n; None when the step was not clipped), and the training-set loss at the initial and
the trained weights. steps_run and skipped_steps are the single step's: the training curve
between is the run's own, untrusted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.mixed_precision.exercises.float32_step.problem import (
    CONFIG,
    PARAMETERS,
    Problem,
    build,
    flat,
    float32_step,
    overflows,
    set_loss,
)
from drills.catalog.mixed_precision.reading import LEARNS_BY
from drills.catalog.mixed_precision.signature import MixedPrecisionSignature
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    weights_check,
)
from drills.exercises.tensors import check_against

STEP_BAND = 0.05  # the largest per-parameter ||step - float32 step|| / ||float32 step||
# A step shorter than the unclipped one (lr x ||g||) by more than this share was clipped: float16
# rounding moves a step's length by 5e-4 at most on seeds 0-4, and the gradient norm of the
# first run is 1.04-2.03 there, a clip of 4% or more.
CLIPPED_BY = 0.01
SIGNATURE_RUN = 0  # the run whose numbers fill the drill's signature: the drill's own setup


@dataclass(frozen=True)
class StepReading:
    step: torch.Tensor  # the learner's single step, flattened (float64)
    reference: torch.Tensor  # float32's step from the same weights on the same batch
    gradient: torch.Tensor  # the float64 gradient of that batch, unclipped
    worst: tuple[str, float]  # the parameter whose step differs most, and by how much
    ratio: float  # ||step|| / ||float32 step||


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(case, seed).model.state_dict())


def read_step(case: CaseEvidence, problem: Problem) -> StepReading | str:
    """The learner's single step against float32's, or why it cannot be read."""
    stepped = case.values or {}
    problem_text = check_against(stepped, case.initial)
    if problem_text:
        return f"at {case.label}, the weights after one step did not come back ({problem_text})"
    step = flat(stepped) - flat(case.initial)
    reference, gradient = float32_step(problem, problem.batches[0])
    worst, start = ("", 0.0), 0
    for name in PARAMETERS:
        size = case.initial[name].numel()
        part = slice(start, start + size)
        difference = float((step[part] - reference[part]).norm() / reference[part].norm())
        worst = max(worst, (name, difference), key=lambda pair: pair[1])
        start += size
    ratio = float(step.norm() / reference.norm())
    return StepReading(step, reference, gradient, worst, ratio)


def step_finding(label: str, reading: StepReading) -> str | None:
    """What is wrong with one step, in the learner's terms; None when it is float32's."""
    name, difference = reading.worst
    if difference <= STEP_BAND:
        return None
    if reading.ratio == 0:
        return f"at {label}, one step of your loop did not move the weights"
    if abs(reading.ratio - 1.0) <= CLIPPED_BY:
        return (
            f"at {label}, one step of your loop is as long as the same loop's in float32 from "
            f"the same weights, but parameter {name} moved {difference:.0%} away from its "
            "float32 step"
        )
    return (
        f"at {label}, one step of your loop moved the weights {reading.ratio:.3g} times as far "
        f"as the same loop in float32 from the same weights (parameter {name}: "
        f"{difference:.0%} away from its float32 step)"
    )


def skip_finding(case: CaseEvidence, problem: Problem, reading: StepReading) -> str | None:
    """At a run whose scaled gradients overflow float16: the step must change nothing."""
    if not overflows(problem, reading.gradient):
        return None
    if float(reading.step.abs().max()) == 0.0:
        return None
    return (
        f"at {case.label}, the first scaled gradients do not fit in float16, yet one step of "
        "your loop moved the weights: a step that should have been skipped was taken"
    )


def trains_finding(case: CaseEvidence, problem: Problem) -> str | None:
    assert case.weights is not None
    start, end = set_loss(case.initial, problem.data), set_loss(case.weights, problem.data)
    if end <= LEARNS_BY * start:
        return None
    return (
        f"at {case.label}, {len(problem.batches)} steps took the training loss from "
        f"{start:.3g} to {end:.3g} ({end / start:.0%} of it)"
    )


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    steps: list[str] = []
    skips: list[str] = []
    trains: list[str] = []
    signature = None
    for case in cases:
        problem = build(case.case, case.seed)
        if case.weights is not None:
            share = set_loss(case.weights, problem.data) / set_loss(case.initial, problem.data)
            measurements[f"trained loss / first ({case.label})"] = share
            found = trains_finding(case, problem)
            trains += [found] if found else []
        if case.error:
            continue
        reading = read_step(case, problem)
        if isinstance(reading, str):
            steps.append(reading)
            continue
        measurements[f"step / float32 step ({case.label})"] = reading.ratio
        measurements[f"worst parameter difference ({case.label})"] = reading.worst[1]
        if overflows(problem, reading.gradient):
            found = skip_finding(case, problem, reading)
            skips += [found] if found else []
        else:
            found = step_finding(case.label, reading)
            steps += [found] if found else []
        if case.case == SIGNATURE_RUN and case.weights is not None:
            signature = signature_of(case, problem, reading)

    errored = [case for case in cases if case.error]
    if errored:
        checks += [
            missing_evidence(exercise, key, errored) for key in ("float32-step", "skips-overflow")
        ]
    else:
        passed = "Each step of your loop is float32's, parameter by parameter, to float16 rounding."
        checks.append(findings_check(exercise, "float32-step", steps, passed))
        skipped = "Where the scaled gradients overflow float16, your step changed no weight."
        checks.append(findings_check(exercise, "skips-overflow", skips, skipped))
    unusable = [case for case in cases if case.weights is None]
    if unusable:
        checks.append(missing_evidence(exercise, "trains", unusable))
    else:
        fell = "In every hidden run the training loss fell to half its first value or less."
        checks.append(findings_check(exercise, "trains", trains, fell))
    return Assessment(checks, measurements, signature)


def signature_of(
    case: CaseEvidence, problem: Problem, reading: StepReading
) -> MixedPrecisionSignature:
    assert case.weights is not None
    initial = set_loss(case.initial, problem.data)
    final = set_loss(case.weights, problem.data)
    true_norm = float(reading.gradient.norm())
    step_norm = float(reading.step.norm())
    moved = step_norm > 0
    # A step shorter than lr x ||g|| was clipped: to norm lr x max_norm / n by a norm n. One
    # as long, and float32's, is what the true norm gives (at or under max_norm, no clip).
    read_norm = None
    if moved and step_norm < CONFIG.lr * true_norm * (1 - CLIPPED_BY):
        read_norm = CONFIG.lr * CONFIG.max_norm * true_norm / step_norm
    elif moved and reading.worst[1] <= STEP_BAND:
        read_norm = true_norm
    both = step_norm * float(reading.reference.norm())
    return MixedPrecisionSignature(
        initial_scale=problem.scale,
        steps_run=1,
        skipped_steps=0 if moved else 1,
        skipped_share=0.0 if moved else 1.0,
        first_taken_step=0 if moved else None,
        step_scale=problem.scale if moved else None,
        update_ratio=reading.ratio if moved else None,
        update_cosine=float(reading.step.dot(reading.reference)) / both if moved else None,
        scaled_clip_ratio=1.0 / (problem.scale * min(1.0, true_norm / CONFIG.max_norm)),
        float32_grad_norm=true_norm,
        logged_grad_norm=read_norm,
        norm_ratio=read_norm / true_norm if read_norm is not None else None,
        initial_loss=initial,
        final_loss=final,
        max_loss=max(initial, final),
    )
