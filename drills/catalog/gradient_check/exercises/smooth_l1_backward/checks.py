"""Runs outside the sandbox: the loss and the gradient the learner's MaskedSmoothL1 gave on the
judge's probes, against the plain loss's value and autograd gradient in float64 (reading.py);
and the held-out loss of the weights the learner's training run left behind, against the same
loop trained here, from the same weights on the same logs, with the loss's true gradient. All
measured here: nothing the learner's loop logs is read, and no learner code runs here.

Thresholds, from the reference solution, two other right files and five wrong ones on seeds
0-4 (two hidden runs each; tests/exercises/test_gradient_check_fixes.py):
- TOLERANCE (the drill's GRAD_TOLERANCE, 1e-6) on each element's error (reading.py) and on the
  loss's relative error. Right files reach 2.5e-16 in float64, 5.3e-8 when their step weights
  round through float32. The slips score far above it: a quadratic part with a slope of x is
  off by up to 1 - beta at beta 0.25 (0.75) and by 0.5 at beta 2; a gradient on a padded step
  by 1; the gradient times the number of logs by 0.8 (5 logs); zeros by 1; NaN by 2.
- LEARNS_WITHIN (1.1) on your held-out loss over the reference training's. Right files: 1.0000.
  A quadratic part right at beta = 1 only (slope x, or clamp(x, -1, 1)) ends 0.99-1.04 times
  it, and the gradient times the number of logs 1.0000 (Adam divides the scale out): only the
  gradient check fails those. The starter (padded steps given a gradient) ends 1.17-1.86 times
  it, a backward of zeros 3.1-6.5 times.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from drills.catalog.gradient_check.exercises.smooth_l1_backward.problem import (
    STEPS,
    Problem,
    build,
    held_out_loss,
    initial_model,
    one_thread,
    reference_training,
)
from drills.catalog.gradient_check.exercises.smooth_l1_backward.reading import (
    Reading,
    loss_finding,
    padding_finding,
    read,
    real_finding,
)
from drills.catalog.gradient_check.signature import GradientCheckSignature
from drills.catalog.gradient_check.variants import GRAD_TOLERANCE
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    weights_check,
)

TOLERANCE = GRAD_TOLERANCE
LEARNS_WITHIN = 1.1
Measurements = dict[str, float | int | bool | str | None]


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(initial_model(seed).state_dict())


def readings(case: CaseEvidence, problem: Problem) -> list[Reading]:
    values = case.values or {}
    return [read(values, probe, index) for index, probe in enumerate(problem.probes)]


def record(measured: Measurements, case: CaseEvidence, found: list[Reading]) -> None:
    for reading in found:
        beta, real = reading.probe.beta, reading.real
        inside = torch.where(real, reading.error, torch.zeros_like(reading.error))
        outside = torch.where(real, torch.zeros_like(reading.error), reading.error)
        measured[f"gradient error, real steps, beta {beta:g} ({case.label})"] = float(inside.max())
        measured[f"gradient error, padded steps, beta {beta:g} ({case.label})"] = float(
            outside.max()
        )


def learns_finding(
    case: CaseEvidence, problem: Problem, measured: Measurements
) -> tuple[str | None, float, float]:
    """(what is wrong, yours, the reference's): the held-out loss after the run, both ways."""
    assert case.weights is not None
    mine = held_out_loss(case.weights, problem)
    reference = held_out_loss(reference_training(problem), problem)
    measured[f"held-out loss ({case.label})"] = mine
    measured[f"held-out loss, true gradient ({case.label})"] = reference
    measured[f"held-out loss / true gradient's ({case.label})"] = mine / reference
    text = None
    if mine > LEARNS_WITHIN * reference:
        text = (
            f"at {case.label}, after {STEPS} steps your model's held-out loss is {mine:.3g}; "
            "the same loop from the same weights on the same logs, following the loss's true "
            f"gradient, reaches {reference:.3g} (yours is {mine / reference:.2f} times it)"
        )
    return text, mine, reference


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    with one_thread():
        return measured_assessment(exercise, cases)


def measured_assessment(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measured: Measurements = {}
    found: dict[str, list[str]] = {"loss-value": [], "gradient-real": [], "gradient-padding": []}
    finders = {
        "loss-value": loss_finding,
        "gradient-real": real_finding,
        "gradient-padding": padding_finding,
    }
    read_back: list[Reading] = []
    problems = {case.case: build(case.case, case.seed) for case in cases}
    for case in cases:
        if case.error:
            continue
        problem = problems[case.case]
        found_here = readings(case, problem)
        record(measured, case, found_here)
        read_back += found_here
        for key, finder in finders.items():
            found[key] += [text for r in found_here if (text := finder(r, TOLERANCE))]
    errored = [case for case in cases if case.error]
    passed = {
        "loss-value": "On every probe, MaskedSmoothL1 returns the masked smooth L1 of float64.",
        "gradient-real": "At every real step, at every beta, your backward gives the loss's "
        "gradient, on both parts and next to beta.",
        "gradient-padding": "Every padded step, and every step of a log with no real one, gets "
        "a gradient of exactly 0.",
    }
    for key, findings in found.items():
        if errored:
            checks.append(missing_evidence(exercise, key, errored))
        else:
            checks.append(findings_check(exercise, key, findings, passed[key]))

    learns: list[str] = []
    trained: tuple[float, float, float] | None = None
    for case in cases:
        if case.weights is None:
            continue
        problem = problems[case.case]
        text, mine, reference = learns_finding(case, problem, measured)
        learns += [text] if text else []
        if case.case == 0:
            trained = (held_out_loss(case.initial, problem), mine, reference)
    unusable = [case for case in cases if case.weights is None]
    if unusable:
        checks.append(missing_evidence(exercise, "learns", unusable))
    else:
        near = f"In every hidden run your model ends within {LEARNS_WITHIN - 1:.0%} of the "
        near += "held-out loss the true gradient trains to."
        checks.append(findings_check(exercise, "learns", learns, near))
    signature = None if errored else signature_of(read_back, trained)
    return Assessment(checks, measured, signature)


def signature_of(
    found: list[Reading], trained: tuple[float, float, float] | None
) -> GradientCheckSignature:
    """The drill's signature from the judge's measurements: the gradient check over every
    probe of every hidden run (the "input" of an element is its residual, pred - target), and
    the first hidden run's training against the reference training."""
    errors = torch.cat([r.error.flatten() for r in found])
    residuals = torch.cat([r.residual.flatten() for r in found])
    worst = int(errors.argmax())
    signature = GradientCheckSignature(
        elements_checked=errors.numel(),
        max_grad_error=float(errors[worst]),
        grad_tolerance=TOLERANCE,
        worst_element=worst,
        worst_input=float(residuals[worst]),
        negative_inputs_error=float(errors[residuals < 0].max()),
        positive_inputs_error=float(errors[residuals > 0].max()),
    )
    if trained is not None:
        initial, final, reference = trained
        signature.initial_loss = initial
        signature.final_loss = final  # held out, after the run (the drill: training's tail)
        signature.reference_final_loss = reference
        signature.loss_ratio = final / reference
    return signature
