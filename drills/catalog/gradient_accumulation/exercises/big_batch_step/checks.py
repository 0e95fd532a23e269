"""Runs outside the sandbox: one step of the learner's loop against the big batch's step, and
the training-set loss of the weights its training run left behind, both measured here.

The reference step is plain SGD at the starter's rate on one batch holding the step's k
micro-batches, from the hidden run's initial weights, computed here in float64. The learner's
step is what the weights after their single step moved by: nothing their loop reports is read.

Thresholds, from the reference solution, two other right loops and seven wrong ones on seeds
0-4 (five hidden runs at each k):
- STEP_TOLERANCE, the drill's GRAD_TOLERANCE (1e-5), on ||your step - big-batch step|| /
  ||big-batch step||, which is at least |ratio of their lengths - 1|: one band for the length
  and the direction. A step that is the big batch's differs from it by 4.7e-8 to 1.2e-7 of its
  length (float32 rounding; the same with the losses averaged before one backward, or with the
  rate divided by k), 80 times under the band. The wrong steps differ by 0.497 (zero_grad
  before each micro-batch, which keeps the last one's gradient only) to 7 (summed, k = 8):
  50,000 times over it.
- FLOOR_BAND (2%): at k = 8 a loop that takes the big batch's step ends 0.2-0.4% above the
  least-squares minimum after 40 steps. One that steps on single micro-batches of 16, a batch
  8 times smaller at the same rate, ends 5.8-17% above it; one whose step is a micro-batch's
  divided by 8, 3.3 to 7.9 times it; one that blows up, 3e15 times it or more. At k = 1 and 3
  the batch is small and its noise keeps even a right loop 1.7-10% above the minimum, so the
  floor is read at k = 8 only.

The drill's signature (AccumulationSignature) is filled from the k = 8 run: the step's numbers
(update_ratio, effective_lr, and the gradient comparisons, read off the steps: a plain SGD step
is -lr times the gradient it applies), the closed-form stability_limit and best_loss, and the
training-set loss at the initial and the trained weights. max_loss is the higher of those two,
the only losses measured here (the curve between them is the run's own, untrusted); steps_run
and worst_grad_relative_diff, which need the curve, stay None.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.gradient_accumulation import GRAD_TOLERANCE
from drills.catalog.gradient_accumulation.exercises.big_batch_step.problem import (
    CONFIG,
    MICRO_BATCHES,
    Problem,
    build,
    set_loss,
)
from drills.catalog.gradient_accumulation.problem import best_loss, stability_limit
from drills.catalog.gradient_accumulation.signature import AccumulationSignature
from drills.catalog.gradient_accumulation.train import Comparison, compare, norm
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

STEP_TOLERANCE = GRAD_TOLERANCE  # ||your step - big-batch step|| / ||big-batch step||
FLOOR_BAND = 0.02  # the trained loss ends within 2% above the least-squares minimum
TRAINED_AT = max(MICRO_BATCHES)  # the k at which the floor is read: 8
# Only words a wrong step's message: a step that is a multiple of the big batch's has a cosine
# within 1e-9 of 1, one of a different gradient at most 0.9985 on seeds 0-4 (the last
# micro-batch alone divided by k, at k = 8).
SAME_WAY = 0.9999
LR = CONFIG.lr  # the starter's rate, 0.16: what the big batch's step is taken at


@dataclass(frozen=True)
class StepReading:
    ratio: float | None  # ||your step|| / ||big-batch step||
    gradients: Comparison  # the gradients the two steps apply, compared


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(case, seed).model.state_dict())


def big_batch_step(problem: Problem) -> torch.Tensor:
    """Plain SGD on one batch of the first step's k micro-batches, as one float64 vector
    (weight, then bias)."""
    micro = problem.batches[: problem.k]
    x = torch.cat([features for features, _ in micro]).double()
    y = torch.cat([targets for _, targets in micro]).double()
    weight = problem.model.weight.detach().double().requires_grad_()
    bias = problem.model.bias.detach().double().requires_grad_()
    loss = (x @ weight.T + bias - y).pow(2).mean()
    grad_weight, grad_bias = torch.autograd.grad(loss, [weight, bias])
    return -LR * torch.cat([grad_weight.flatten(), grad_bias.flatten()])


def flat(weights: dict[str, torch.Tensor]) -> torch.Tensor:
    return torch.cat([weights["weight"].double().flatten(), weights["bias"].double().flatten()])


def read_step(case: CaseEvidence, problem: Problem) -> StepReading | str:
    """The learner's single step against the big batch's, or why it cannot be read."""
    stepped = case.values or {}
    problem_text = check_against(stepped, case.initial)
    if problem_text:
        return f"at {case.label}, the weights after one step did not come back ({problem_text})"
    step = flat(stepped) - flat(case.initial)
    big = big_batch_step(problem)
    ratio = norm(step) / norm(big) if norm(big) > 0 else None
    return StepReading(ratio, compare(-step / LR, -big / LR))


def step_finding(label: str, k: int, reading: StepReading) -> str | None:
    """What is wrong with one step, in the learner's terms; None when it is the big batch's."""
    difference = reading.gradients.relative_diff
    if difference is not None and difference <= STEP_TOLERANCE:
        return None
    if not reading.ratio:
        return f"at {label}, one step of your loop did not move the weights"
    examples = k * CONFIG.micro_batch_size
    text = (
        f"at {label}, one step of your loop moved the weights {reading.ratio:.3g} times as far "
        f"as plain SGD at the rate {LR:g} does on one batch of the same {examples} examples, "
        "from the same weights"
    )
    cosine = reading.gradients.cosine
    if cosine is not None and cosine >= SAME_WAY:
        return text + ", in the same direction"
    shown = "undefined" if cosine is None else f"{cosine:.3f}"
    return text + f", and in another direction (cosine {shown} between the two steps)"


def floor_check(exercise: Exercise, case: CaseEvidence, problem: Problem) -> CheckResult:
    key = "trains-to-floor"
    if case.weights is None:
        return missing_evidence(exercise, key, [case])
    excess = set_loss(case.weights, problem.data) / best_loss(problem.data) - 1.0
    if excess <= FLOOR_BAND:
        return result(
            exercise,
            key,
            "pass",
            f"At {case.label}, training ends {max(excess, 0.0):.1%} above the lowest loss the "
            "data allow.",
        )
    text = (
        f"At {case.label}, the weights your loop trained reach a training-set loss "
        f"{excess + 1:.3g} times the lowest the data allow; a loop that takes the big batch's "
        f"step ends within {FLOOR_BAND:.0%} of it."
    )
    if set_loss(case.weights, problem.data) > set_loss(case.initial, problem.data):
        text += " The loss ended higher than it started."
    return result(exercise, key, "fail", text)


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    findings: list[str] = []
    signature = None
    for case in cases:
        problem = build(case.case, case.seed)
        if case.weights is not None:
            trained = set_loss(case.weights, problem.data) / best_loss(problem.data)
            measurements[f"trained loss / minimum ({case.label})"] = trained
        if case.error:
            continue
        reading = read_step(case, problem)
        if isinstance(reading, str):
            findings.append(reading)
            continue
        measurements[f"step / big-batch step ({case.label})"] = reading.ratio
        measurements[f"step difference ({case.label})"] = reading.gradients.relative_diff
        found = step_finding(case.label, problem.k, reading)
        if found:
            findings.append(found)
        if problem.k == TRAINED_AT and case.weights is not None:
            signature = signature_of(case, problem, reading)

    errored = [case for case in cases if case.error]
    if errored:
        checks.append(missing_evidence(exercise, "big-batch-step", errored))
    else:
        passed = "At every k, one step of your loop is the big batch's step, to float rounding."
        checks.append(findings_check(exercise, "big-batch-step", findings, passed))
    at_eight = next(case for case in cases if MICRO_BATCHES[case.case] == TRAINED_AT)
    checks.append(floor_check(exercise, at_eight, build(at_eight.case, at_eight.seed)))
    return Assessment(checks, measurements, signature)


def signature_of(
    case: CaseEvidence, problem: Problem, reading: StepReading
) -> AccumulationSignature:
    assert case.weights is not None
    initial = set_loss(case.initial, problem.data)
    final = set_loss(case.weights, problem.data)
    gradients = reading.gradients
    return AccumulationSignature(
        micro_batches=problem.k,
        micro_batch_size=CONFIG.micro_batch_size,
        examples_per_step=problem.k * CONFIG.micro_batch_size,
        update_ratio=reading.ratio,
        grad_scale=gradients.scale,
        grad_cosine=gradients.cosine,
        grad_max_abs_diff=gradients.max_abs_diff,
        grad_relative_diff=gradients.relative_diff,
        effective_lr=LR * reading.ratio if reading.ratio is not None else None,
        stability_limit=stability_limit(problem.data),
        best_loss=best_loss(problem.data),
        initial_loss=initial,
        final_loss=final,
        max_loss=max(initial, final),
    )
