"""Runs outside the sandbox: one step of the learner's loop against the step of the batch's
per-token mean, and the held-out loss per token of the weights its training run left behind,
both measured here.

The reference step is plain SGD at the starter's rate on the batch's mean loss per real token,
from the hidden run's initial weights, computed here in float64. The learner's step is what the
weights after their single step moved by: nothing their loop logs is read.

Thresholds, from the reference solution, two other right loops and four wrong ones on seeds 0-4
(two hidden runs each: a step on an ordinary batch and on the long documents' batch):
- STEP_TOLERANCE (1e-4) on ||your step - per-token step|| / ||per-token step||. A right loop's
  step differs from it by float32 rounding (see tests/exercises/test_per_token_fixes.py for the
  measured band); a wrong one by 0.06 or more (a fixed 64-token budget on an ordinary batch of
  60 tokens) up to 47 (the starter on the long batch).
- FLOOR_BAND (1.2): a right loop's held-out loss per token ends 1.06-1.12 times the closed-form
  floor after 320 steps; a loop whose steps are too long turns to NaN, one whose steps are too
  short ends far above.

The drill's signature (VariableLengthSignature) is filled from the measured steps (a plain SGD
step is linear in the loss, so ||your step|| / ||per-token step|| is your loss over the
per-token mean, and the batch's tokens over it the divisor your loop used) and from the held-out
sequences: their per-token corpus mean, their mean of batch means cut by length, and the floor.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.variable_length_loss.exercises.per_token_loss.problem import (
    FIRST_BATCH,
    Problem,
    build,
    corpus_per_token,
)
from drills.catalog.variable_length_loss.problem import Batch, best_per_token, by_length
from drills.catalog.variable_length_loss.signature import VariableLengthSignature
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    result,
    weights_check,
)
from drills.exercises.tensors import check_against

STEP_TOLERANCE = 1e-4
FLOOR_BAND = 1.2
SAME_WAY = 0.9999  # only words a wrong step's message: parallel, or another direction
LR = 2.0  # the starter's rate: what the per-token step is taken at
NAMES = ("0.weight", "1.weight", "1.bias")


@dataclass(frozen=True)
class StepReading:
    ratio: float  # ||your step|| / ||per-token step||
    difference: float  # ||your step - per-token step|| / ||per-token step||
    cosine: float | None


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(case, seed).model.state_dict())


def flat(weights: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([weights[name].double().flatten() for name in NAMES])


def per_token_step(initial: dict[str, torch.Tensor], batch: Batch) -> torch.Tensor:
    """Plain SGD on the batch's mean loss per real token, in float64, as one vector."""
    embedding, linear, bias = (initial[name].double().requires_grad_() for name in NAMES)
    logits = embedding[batch.inputs] @ linear.T + bias
    real = batch.labels != -100
    picked = torch.log_softmax(logits, dim=-1)[real, batch.labels[real]]
    loss = -picked.sum() / real.sum()
    grads = torch.autograd.grad(loss, [embedding, linear, bias])
    return -LR * torch.cat([g.flatten() for g in grads])


def read_step(case: CaseEvidence, problem: Problem) -> StepReading | str:
    stepped = case.values or {}
    problem_text = check_against(stepped, case.initial)
    if problem_text:
        return f"on {case.label}, the weights after one step did not come back ({problem_text})"
    step = flat(stepped) - flat(case.initial)
    reference = per_token_step(case.initial, problem.first)
    size = float(reference.norm())
    both = size * float(step.norm())
    return StepReading(
        ratio=float(step.norm()) / size,
        difference=float((step - reference).norm()) / size,
        cosine=float(step.dot(reference)) / both if both > 0 else None,
    )


def step_finding(label: str, reading: StepReading) -> str | None:
    if reading.difference <= STEP_TOLERANCE:
        return None
    if reading.ratio == 0:
        return f"on {label}, one step of your loop did not move the weights"
    text = (
        f"on {label}, one step of your loop moved the weights {reading.ratio:.3g} times as far "
        f"as plain SGD at the rate {LR:g} does on the batch's mean loss per real token, from "
        "the same weights"
    )
    if reading.cosine is not None and reading.cosine >= SAME_WAY:
        return text + ", in the same direction"
    shown = "undefined" if reading.cosine is None else f"{reading.cosine:.3f}"
    return text + f", and in another direction (cosine {shown} between the two steps)"


def held_out_ratio(weights: dict[str, torch.Tensor], problem: Problem) -> float | None:
    value = corpus_per_token(weights, problem.held_out)
    floor = best_per_token([len(s) for s in problem.held_out])
    return value / floor if math.isfinite(value) else None


def floor_check(exercise: Exercise, case: CaseEvidence, problem: Problem) -> CheckResult:
    key = "trains-to-floor"
    if case.weights is None:
        return missing_evidence(exercise, key, [case])
    ratio = held_out_ratio(case.weights, problem)
    if ratio is not None and ratio <= FLOOR_BAND:
        return result(
            exercise,
            key,
            "pass",
            f"On held-out sequences your trained weights lose {ratio:.3g} times the lowest "
            "loss per token the source allows.",
        )
    shown = "a number that is not finite" if ratio is None else f"{ratio:.3g} times"
    return result(
        exercise,
        key,
        "fail",
        f"On held-out sequences your trained weights lose {shown} the lowest loss per token "
        f"the source allows; a loop that takes the per-token step ends within {FLOOR_BAND:g} "
        "times it.",
    )


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    findings: list[str] = []
    readings: list[tuple[StepReading, Batch]] = []
    for case in cases:
        problem = build(case.case, case.seed)
        if case.weights is not None:
            measurements[f"held-out loss / floor ({case.label})"] = held_out_ratio(
                case.weights, problem
            )
        if case.error:
            continue
        reading = read_step(case, problem)
        if isinstance(reading, str):
            findings.append(reading)
            continue
        measurements[f"step / per-token step ({case.label})"] = reading.ratio
        measurements[f"step difference ({case.label})"] = reading.difference
        readings.append((reading, problem.first))
        found = step_finding(case.label, reading)
        if found:
            findings.append(found)
    errored = [case for case in cases if case.error]
    if errored:
        checks.append(missing_evidence(exercise, "per-token-step", errored))
    else:
        passed = "On both batches, one step of your loop is the per-token step, to rounding."
        checks.append(findings_check(exercise, "per-token-step", findings, passed))
    first = next(case for case in cases if FIRST_BATCH[case.case] == "ordinary")
    problem = build(first.case, first.seed)
    checks.append(floor_check(exercise, first, problem))
    signature = signature_of(readings, first, problem) if len(readings) == len(cases) else None
    return Assessment(checks, measurements, signature)


def signature_of(
    readings: list[tuple[StepReading, Batch]], case: CaseEvidence, problem: Problem
) -> VariableLengthSignature:
    ratios = [reading.ratio for reading, _ in readings]
    divisors = [
        batch.tokens / r if r > 0 else math.inf
        for r, (_, batch) in zip(ratios, readings, strict=True)
    ]
    signature = VariableLengthSignature(
        tokens_min=min(batch.tokens for _, batch in readings),
        tokens_max=max(batch.tokens for _, batch in readings),
        ratio_min=min(ratios),
        ratio_max=max(ratios),
        divisor_min=min(divisors) if all(map(math.isfinite, divisors)) else None,
        divisor_max=max(divisors) if all(map(math.isfinite, divisors)) else None,
        best_per_token=best_per_token([len(s) for s in problem.held_out]),
    )
    if case.weights is not None:
        per_token = corpus_per_token(case.weights, problem.held_out)
        means = batch_means(case.weights, by_length(problem.held_out))
        if math.isfinite(per_token) and math.isfinite(means):
            signature.eval_number = per_token  # the per-token corpus mean, measured here
            signature.eval_per_token = per_token
            signature.eval_batch_means = means
            signature.eval_gap = 0.0
    return signature


@torch.no_grad()
def batch_means(weights: dict[str, torch.Tensor], batches: list[Batch]) -> float:
    """The mean of the batches' per-token means, in float64."""
    embedding, linear, bias = (weights[name].double() for name in NAMES)
    means = []
    for batch in batches:
        logits = embedding[batch.inputs] @ linear.T + bias
        real = batch.labels != -100
        picked = torch.log_softmax(logits, dim=-1)[real, batch.labels[real]]
        means.append(float(-picked.sum() / real.sum()))
    return sum(means) / len(means)
