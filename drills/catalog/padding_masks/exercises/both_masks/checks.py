"""Runs outside the sandbox: what the learner's model and loss do with padding, measured here
(drills/.../both_masks/measure.py) against the problem's own forward and the mean loss over the
real tokens, from the same weights; nothing the learner's loop logs is read.

- same-padded-or-alone: the learner's logits for the held-out sequences padded to the run's
  length and to 128, from the hidden run's initial weights and from the trained ones, against
  the problem's model run on each sequence alone (no padding, so nothing to mask); and the
  learner's own run alone against it, so that a model which stopped computing what the
  problem's model computes is not taken for a masked one.
- loss-over-real-tokens: in one step of the learner's loop, the gradient its loss sent back to
  the model's logits, kept by the harness: zero at every padding position, and at the real ones
  that of the mean cross-entropy over the batch's real tokens, recomputed here from the same
  logits and the batch's labels.
- trains: the trained model's loss per real token on held-out sequences padded as in training,
  recomputed here from the logits the learner's model gave the harness and the true labels
  (where the padding check passes, these are the problem's model's logits to 1e-4).

Thresholds, from the reference solution, three right files and six wrong ones
(tests/exercises/fixtures/padding_both_masks/) on seeds 0-4 (two hidden runs each), whose bands
tests/exercises/test_padding_masks_fixes.py asserts:
- SAME_OUTPUT (1e-5, initial weights) and SAME_TRAINED_OUTPUT (1e-4, trained) are the drill's.
  A masked forward is its sequence alone to float rounding (at most 1.6e-7 and 2.5e-6); one that
  lets padding in moves a real token's logits by 0.28 or more.
- GRADIENT_TOLERANCE (1e-4) on ||your gradient - reference|| / ||reference|| at the real tokens:
  a right loss sits at float32 rounding (6e-8 at most); a mean over every position, padding
  counted or not, has the real share (0.14-0.44) times the reference's gradient, 0.56 apart.
- TRAINED_LOSS is ln 2, what a coin flip between the two labels loses per token: right loops
  end at 0.09-0.17 nats after their 100 steps, and every wrong file that trains at all (its
  mistake caught by the other checks) under 0.33; the untrained model starts at 1.00-1.26.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch

from drills.catalog.padding_masks import SAME_OUTPUT, SAME_TRAINED_OUTPUT
from drills.catalog.padding_masks.exercises.both_masks.measure import (
    ProbeReading,
    StepReading,
    held_out_loss,
    read_probe,
    read_step,
)
from drills.catalog.padding_masks.exercises.both_masks.problem import PAD_TO, Problem, build
from drills.catalog.padding_masks.problem import PAD
from drills.catalog.padding_masks.signature import PaddingSignature
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    weights_check,
)

GRADIENT_TOLERANCE = 1e-4
TRAINED_LOSS = math.log(2)
SAME_WAY = 0.9999  # only words a wrong gradient's message: parallel, or another direction
SIGNATURE_CASE = PAD_TO.index(64)  # the drill reads the hidden run with the most padding
WHEN = {"before": "from the initial weights", "after": "with your trained weights"}

Measurements = dict[str, float | int | bool | str | None]


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return build(case, seed).initial


def probe_findings(label: str, when: str, reading: ProbeReading) -> list[str]:
    tolerance = SAME_OUTPUT if when == "before" else SAME_TRAINED_OUTPUT
    found = []
    where = f"{label}, {WHEN[when]}"
    # Alone first: with no padding there is nothing to mask, so a model that differs from the
    # problem's there computes something else, and its padded outputs say nothing of a mask.
    if not math.isfinite(reading.alone_gap):
        found.append(
            f"{where}: run on a sequence alone, with no padding at all, your model's logits are "
            "NaN or infinite (the problem's model, with the same weights, gives finite ones)"
        )
    elif reading.alone_gap > tolerance:
        found.append(
            f"{where}: run on a sequence alone, with no padding at all, your model's logits "
            f"differ by up to {reading.alone_gap:.2g} from the problem's model with the same "
            "weights: with nothing to mask, the model must compute what it did before"
        )
    for pad_to, shift in reading.shifts.items():
        if shift <= tolerance:
            continue
        if not math.isfinite(shift):
            found.append(
                f"{where}: with the sequences padded to {pad_to}, your model's logits for the "
                "real tokens are NaN or infinite"
            )
        else:
            found.append(
                f"{where}: with the sequences padded to {pad_to}, a real token's logits differ "
                f"by up to {shift:.2g} from what the model gives the same sequence alone, with "
                "no padding: padding still changes what a real token gets"
            )
    return found


def step_findings(label: str, reading: StepReading) -> list[str]:
    found = []
    if reading.nonfinite_logits:
        found.append(
            f"{label}: in one step of your loop the model's logits are NaN or infinite at "
            f"{reading.nonfinite_logits} positions ({reading.nonfinite_logits_padding} of them "
            f"padding), and the gradient your loss sent back to the logits is NaN or infinite "
            f"at {reading.nonfinite_gradient}"
        )
    elif not reading.finite:
        found.append(
            f"{label}: in one step of your loop the gradient your loss sent back to the model's "
            f"logits is NaN or infinite at {reading.nonfinite_gradient} positions"
        )
    elif reading.counted_padding:
        found.append(
            f"{label}: in one step of your loop the loss has a gradient at "
            f"{reading.counted_padding} of the batch's {reading.padding} padding positions: "
            "what the model says there changes the loss, so padding is counted"
        )
    if reading.finite and reading.difference > GRADIENT_TOLERANCE:
        text = (
            f"{label}: at the real tokens your loss's gradient is {reading.ratio:.3g} times that "
            "of the mean cross-entropy over the batch's real tokens"
        )
        same_way = reading.cosine is not None and reading.cosine >= SAME_WAY
        if same_way and abs(reading.ratio / reading.real_share - 1) < 0.01:
            text += (
                f", which is the share of the batch's positions that hold a real token "
                f"({reading.real_share:.3g}): the mean is taken over every position"
            )
        elif same_way:
            text += ", in the same direction"
        else:
            shown = "undefined" if reading.cosine is None else f"{reading.cosine:.3f}"
            text += f", in another direction (cosine {shown})"
        found.append(text)
    return found


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    measurements: Measurements = {}
    padding: list[str] = []
    loss: list[str] = []
    trains: list[str] = []
    trained_losses: list[str] = []
    readings: dict[int, tuple[ProbeReading, ProbeReading | None, StepReading]] = {}
    for case in cases:
        if case.error:
            continue
        problem = build(case.case, case.seed)
        values = case.values or {}
        before = read_probe(values, case.initial, problem, "before")
        after = None if case.weights is None else read_probe(values, case.weights, problem, "after")
        step = read_step(values, problem)
        for when, reading in (("before", before), ("after", after)):
            if isinstance(reading, str):
                padding.append(f"{case.label}, {WHEN[when]}: {reading}")
            elif reading is not None:
                padding += probe_findings(case.label, when, reading)
                measure_probe(measurements, case.label, when, reading)
        if isinstance(step, str):
            loss.append(f"{case.label}: {step}")
        else:
            loss += step_findings(case.label, step)
            measure_step(measurements, case.label, step)
        if case.weights is not None:
            measurements[f"held-out loss per real token alone, initial ({case.label})"] = (
                held_out_loss(case.initial, problem)
            )
            measurements[f"held-out loss per real token alone, trained ({case.label})"] = (
                held_out_loss(case.weights, problem)
            )
        if isinstance(after, ProbeReading):
            trained = after.loss_padded
            measurements[f"held-out loss per real token, your model padded ({case.label})"] = (
                trained
            )
            if trained is not None:
                trained_losses.append(f"{trained:.2g}")
            if trained is None or not trained <= TRAINED_LOSS:
                shown = "NaN" if trained is None else f"{trained:.3g} nats"
                trains.append(
                    f"{case.label}: trained, your model loses {shown} per real token on "
                    f"held-out sequences padded to {problem.pad_to} as in training, no better than "
                    f"a coin flip between the two labels ({TRAINED_LOSS:.2f})"
                )
        elif isinstance(after, str):
            trains.append(f"{case.label}, {WHEN['after']}: {after}")
        if isinstance(before, ProbeReading) and not isinstance(step, str):
            readings[case.case] = (before, after if isinstance(after, ProbeReading) else None, step)
    errored = [case for case in cases if case.error]
    checks = [weights_check(exercise, cases, "weights")]
    for key, found, passed in (
        (
            "same-padded-or-alone",
            padding,
            "A real token's logits are the same padded to either length as alone, before and "
            "after training.",
        ),
        (
            "loss-over-real-tokens",
            loss,
            "In one step of your loop, the loss's gradient is zero at every padding position "
            "and that of the mean over the real tokens at the rest.",
        ),
        (
            "trains",
            trains,
            f"Trained, your model loses {' and '.join(trained_losses)} nats per real token on "
            f"held-out sequences; a coin flip between the two labels loses {TRAINED_LOSS:.2f}.",
        ),
    ):
        checks.append(verdict(exercise, key, found, passed, errored, cases))
    signature = None
    if SIGNATURE_CASE in readings:
        signature = signature_of(build(SIGNATURE_CASE, cases[SIGNATURE_CASE].seed), readings)
    return Assessment(checks, measurements, signature)


def verdict(
    exercise: Exercise,
    key: str,
    found: list[str],
    passed: str,
    errored: list[CaseEvidence],
    cases: Sequence[CaseEvidence],
) -> CheckResult:
    if errored:
        return missing_evidence(exercise, key, errored)
    if key == "trains" and any(case.weights is None for case in cases):
        return missing_evidence(exercise, key, [case for case in cases if case.weights is None])
    return findings_check(exercise, key, found, passed)


def measure_probe(measurements: Measurements, label: str, when: str, reading: ProbeReading) -> None:
    for pad_to, shift in reading.shifts.items():
        measurements[f"largest shift padded to {pad_to}, {when} training ({label})"] = shift
    measurements[f"largest gap alone, {when} training ({label})"] = reading.alone_gap


def measure_step(measurements: Measurements, label: str, reading: StepReading) -> None:
    measurements[f"padding positions with a gradient ({label})"] = reading.counted_padding
    measurements[f"gradient at real tokens / per-real-token mean's ({label})"] = reading.ratio
    measurements[f"gradient difference ({label})"] = reading.difference
    measurements[f"real share of the step's batch ({label})"] = reading.real_share


def signature_of(
    problem: Problem, readings: dict[int, tuple[ProbeReading, ProbeReading | None, StepReading]]
) -> PaddingSignature | None:
    """The drill's signature, from the hidden run padded to 64: filled only when the loss is one
    of the two the drill knows (the mean over the real tokens, or over every position) and the
    outputs are finite, so that its reading says something true of this code."""
    before, after, step = readings[SIGNATURE_CASE]
    known = step.finite and (step.over_every_position or step_findings("", step) == [])
    first = before.shifts[problem.pad_to]
    if not known or after is None or not math.isfinite(first):
        return None
    trained = after.shifts[problem.pad_to]
    real = sum(int((tokens != PAD).sum()) for tokens, _ in problem.batches)
    positions = sum(tokens.numel() for tokens, _ in problem.batches)
    return PaddingSignature(
        pad_to=problem.pad_to,
        real_share=real / positions,
        counted_positions=step.counted,
        counted_padding=step.counted_padding,
        counted_padding_share=step.counted_padding / max(1, step.counted),
        first_output_shift=first,
        output_shift=trained if math.isfinite(trained) else None,
        held_out_loss_padded=after.loss_padded,
        held_out_loss_unpadded=after.loss_alone,
        loss_shift=None if after.loss_padded is None else after.loss_padded - after.loss_alone,
        held_out_accuracy=after.accuracy,
    )
