"""Runs outside the sandbox: the learner's run re-read from the weights each step met (reading.py)
and judged on what it trained on, what loss each step saw and what the model learned, all
measured here; nothing the learner's loop logged or printed is read.

Thresholds, from the reference, three right files and five wrong ones on seeds 0-4 (two hidden
runs each: run A has 9-12 wrong labels in one batch, run B 4-6, never at the drill's place 6):
- Wrong labels: none may be trained on. The starter, a lower rate, clipping, a range check on
  the features and dropping the drill's batch 6 train on all of them; skipping every step whose
  loss is above 2 trains on none in run A (that batch starts above 2) and on all in run B.
- KEPT_SHARE: at most 5% of the examples whose label is right and whose features clearly
  match it (problem.MARGIN, 140-146 of them) may be left out, or trained on in under half as
  many steps as the most-trained example. Right files leave out 0-1; dropping batch 6 leaves
  out 15-16; skipping high losses 3-5 in run A, and 8 where it skips run B's batch too.
  Examples that noise carried to another class's side are not counted either way.
- The drill's spike finder and its RECUR_EPOCHS (3) at one place: the starter spikes there in
  7-8 epochs of 8 in run A and 2-7 in run B; a five times lower rate in 5-6; clipping in 3-8;
  skipping high losses in 2-8; right files in none (one stray early blip at most).
- LEARNS_BELOW (0.02 nats; the drill's healthy run ends below it): the trained model's loss on
  the clear examples with their correct labels. Right files end at 0.0011-0.0032; the starter
  at 0.051-0.30, clipping at 0.027-0.15, a lower rate at 0.051-0.16.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.loss_spikes import CONTAINED_AT
from drills.catalog.loss_spikes.exercises.wrong_labels.problem import (
    CONFIG,
    MAX_STEPS,
    Problem,
    build,
)
from drills.catalog.loss_spikes.exercises.wrong_labels.reading import (
    Measure,
    Step,
    Unreadable,
    flat,
    read_run,
)
from drills.catalog.loss_spikes.exercises.wrong_labels.summary import (
    normal_rate,
    share,
    signature_of,
    spikes_of,
)
from drills.exercises.contract import CheckResult, CheckStatus, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    result,
)

KEPT_SHARE = 0.05
LEARNS_BELOW = 0.02
SMALLER_RATE = 0.9  # an ordinary step below this share of the starter's rate: a lowered rate


@dataclass
class Reading:
    case: CaseEvidence
    problem: Problem
    steps: list[Step] | None = None
    why: str | None = None  # why the steps could not be read

    @property
    def counts(self) -> torch.Tensor:
        """How many steps trained on each example."""
        counts = torch.zeros(len(self.problem.clear), dtype=torch.int64)
        for step in self.steps or []:
            counts[list(step.trained)] += 1
        return counts


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(case, seed).model.state_dict())


def read(case: CaseEvidence) -> Reading:
    problem = build(case.case, case.seed)
    reading = Reading(case, problem)
    values = case.values or {}
    if case.error or case.weights is None:
        reading.why = case.unusable()
        return reading
    try:
        if bool(values.get("overflow", torch.zeros(1)).flatten()[:1].any()):
            raise Unreadable(
                f"your loop took more than {MAX_STEPS} steps, more than the judge follows"
            )
        reading.steps = read_run(
            problem, case.initial, values["weights_at"], values["rows"], case.weights
        )
    except Unreadable as exc:
        reading.why = f"{case.label}: {exc}"
    except (KeyError, IndexError, RuntimeError, ValueError, TypeError):
        reading.why = f"{case.label}: the record of your steps could not be read"
    return reading


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    readings = [read(case) for case in cases]
    measurements: dict[str, float | int | bool | str | None] = {}
    wrong_in: list[str] = []
    left_out: list[str] = []
    recurring: list[str] = []
    for reading in readings:
        if reading.steps is None:
            continue
        label, problem = reading.case.label, reading.problem
        counts = reading.counts
        wrong = problem.wrong
        trained_wrong = int((counts[wrong] > 0).sum())
        most = max(int(counts.max()), 1)  # a run that never trained has left everything out
        correct = ~wrong & problem.clear
        missing = int((counts[correct] * 2 < most).sum())
        spikes = spikes_of(reading.steps)
        measurements[f"wrong labels trained on ({label})"] = trained_wrong
        measurements[f"right labels left out ({label})"] = missing
        measurements[f"spikes at one place ({label})"] = len(spikes.at_place)
        if trained_wrong:
            steps = sum(1 for s in reading.steps if wrong[list(s.trained)].any())
            wrong_in.append(
                f"{label}: {trained_wrong} of the {int(wrong.sum())} examples whose label is "
                f"wrong were trained on, in {steps} step{'s' if steps > 1 else ''}"
            )
        if missing > KEPT_SHARE * int(correct.sum()):
            left_out.append(
                f"{label}: {missing} of the {int(correct.sum())} examples whose label is right "
                "(and clearly matches their features) were left out of training, or trained on "
                f"in under half the epochs; a fix may leave out {KEPT_SHARE:.0%} of them at most"
            )
        if spikes.recur:
            recurring.append(spike_finding(label, reading.steps))
    unread = [reading for reading in readings if reading.steps is None]
    checks = [readable_check(exercise, readings)]
    for key, found, passed in (
        ("wrong-labels-out", wrong_in, "No example whose label is wrong was trained on."),
        (
            "right-labels-kept",
            left_out,
            f"The examples whose label is right were kept (at most {KEPT_SHARE:.0%} left out).",
        ),
        (
            "no-recurring-spike",
            recurring,
            "The loss no longer jumps at one place epoch after epoch.",
        ),
    ):
        if unread:
            checks.append(unread_check(exercise, key, unread))
        else:
            checks.append(findings_check(exercise, key, found, passed))
    checks.append(learns_check(exercise, readings, measurements))
    signature = None
    first = readings[0]
    if first.steps is not None and first.case.values is not None:
        measure = Measure(first.problem, first.case.initial)
        signature = signature_of(first.steps, measure, first.case.values["weights_at"])
    return Assessment(checks, measurements, signature)


def spike_finding(label: str, steps: list[Step]) -> str:
    """Where the loss still jumps, and what the loop did to the steps there, in its terms."""
    spikes = spikes_of(steps)
    text = (
        f"{label}: the loss still jumps at the same place in {len(spikes.at_place)} of its "
        f"{spikes.visits} epochs (over {CONFIG.spike_ratio:g}x the median of the "
        f"{CONFIG.window} steps before)"
    )
    rate = normal_rate(steps, spikes)
    shares = [share(steps[i], rate) for i in spikes.at_place]
    if all(steps[i].moved == 0 for i in spikes.at_place):
        return text + (
            "; your loop skips the step there, but the examples that make the loss jump are "
            "still in the data, epoch after epoch"
        )
    known = sorted(value for value in shares if value is not None)
    if known and known[len(known) // 2] <= CONTAINED_AT:
        return text + (
            f"; the steps there moved the weights {known[len(known) // 2]:.0%} of what their "
            "gradient asked for: clipping shrinks what the jump does, not what causes it"
        )
    if rate is not None and rate < SMALLER_RATE * CONFIG.lr:
        return text + (
            f"; at a learning rate of {rate:.2g} every step is smaller, and the jump comes back "
            "all the same: a smaller rate hides what the examples there do, not that they do it"
        )
    return text + "; the examples that make it jump are still trained on"


def readable_check(exercise: Exercise, readings: list[Reading]) -> CheckResult:
    key = "steps-readable"
    broken = [reading for reading in readings if reading.steps is None]
    if not broken:
        total = sum(len(reading.steps or []) for reading in readings)
        return result(
            exercise,
            key,
            "pass",
            f"All {total} steps of the hidden runs read as gradient descent on examples of the "
            "data as given.",
        )
    if any(reading.case.error for reading in broken):
        return missing_evidence(exercise, key, [r.case for r in broken if r.case.error])
    return findings_check(exercise, key, [reading.why or "" for reading in broken], "")


def unread_check(exercise: Exercise, key: str, unread: list[Reading]) -> CheckResult:
    status: CheckStatus = "error" if any(reading.case.error for reading in unread) else "fail"
    labels = ", ".join(reading.case.label for reading in unread)
    return result(exercise, key, status, f"Not measured: the steps of {labels} could not be read.")


def learns_check(
    exercise: Exercise,
    readings: list[Reading],
    measurements: dict[str, float | int | bool | str | None],
) -> CheckResult:
    key = "learns"
    missing = [reading.case for reading in readings if reading.case.weights is None]
    if missing:
        return missing_evidence(exercise, key, missing)
    found = []
    for reading in readings:
        assert reading.case.weights is not None
        measure = Measure(reading.problem, reading.case.initial)
        loss = measure.clear_loss(flat(reading.case.weights, reading.case.initial))
        measurements[f"loss on the correct labels ({reading.case.label})"] = loss
        if not (math.isfinite(loss) and loss <= LEARNS_BELOW):
            found.append(
                f"{reading.case.label}: on the examples that clearly belong to their class, "
                f"with their correct labels, the trained model's loss is {loss:.3g} nats; "
                f"trained without the wrong labels it ends below {LEARNS_BELOW:g}"
            )
    return findings_check(
        exercise,
        key,
        found,
        "On the examples that clearly belong to their class, with their correct labels, the "
        f"trained model's loss is below {LEARNS_BELOW:g} nats in every hidden run.",
    )
