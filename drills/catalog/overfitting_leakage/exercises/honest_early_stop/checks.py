"""Runs outside the sandbox: the weights the learner's train() left in the model, scored here on
a clean held-out set that was never handed out (so nothing can have been copied from it), against
the best epoch of the judge's own honest replay of the same run (replay.py); and the counts of
what every example was trained on, from hooks on the model (harness.py), read for validation
examples. Nothing the learner's loop reports is read.

Thresholds, from the reference solution, three other right loops, the starter and five wrong ones
on seeds 0-4 (two hidden runs each: 64 fresh rows with 64 validation examples copied in, and 512
with 128; the honest replay's best epoch falls at 19-27 and at 4-5):
- Validation: no example of it may be trained on, nor any row the judge cannot name (a changed
  row could be a changed validation example). Loops that keep the copies train on all 64 and
  128 of them.
- BAND (0.06 nats): how far above the replay's best held-out loss the kept weights may be. A right
  loop keeps its own run's validation minimum, in its own batch order: -0.03 to 0.03 above on
  these seeds. Further above is "overfit" when the kept weights fit their training rows better
  than the best epoch did (kept too late: the last epoch, the lowest training loss, 20 epochs on
  the large table, 0.26-1.1 above), "underfit" when worse (stopped short or held back: 6 epochs
  on the small table, only the output layer trained, 0.25-0.51 above).

The drill's signature (OverfittingSignature) is filled from the large table (SIGNATURE_CASE),
every number measured here on the kept weights: their losses on the examples trained on, on
validation and on the clean set, and the validation examples found among those trained on.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.overfitting_leakage.exercises.honest_early_stop.problem import (
    CONFIG,
    COPIED,
    Problem,
    build,
)
from drills.catalog.overfitting_leakage.exercises.honest_early_stop.replay import (
    Best,
    best_checkpoint,
    loss_of,
    model_with,
    one_thread,
)
from drills.catalog.overfitting_leakage.signature import OverfittingSignature
from drills.catalog.overfitting_leakage.train import difference_noise
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import Assessment, CaseEvidence, findings_check, missing_evidence
from drills.kit.synthetic_classification import noise_floor

BAND = 0.06
SIGNATURE_CASE = 1
COUNTS = ("fresh_counts", "val_counts", "unknown", "backwards")


@dataclass(frozen=True)
class Counts:
    fresh: torch.Tensor  # (rows,) backward passes that trained on each fresh row of the table
    val: torch.Tensor  # (512,) the same for each validation example (or a copy of it)
    unknown: int  # rows trained on that are no example of the data as given
    backwards: int


@dataclass(frozen=True)
class Kept:
    clean_loss: float
    train_loss: float  # on the fresh rows of the table: the honest training set
    best: Best

    @property
    def above(self) -> float:
        return self.clean_loss - self.best.clean_loss


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(case, seed).initial)


def counts_of(case: CaseEvidence, problem: Problem) -> Counts | None:
    values = case.values or {}
    if case.error or any(name not in values for name in COUNTS):
        return None
    fresh, val = values["fresh_counts"], values["val_counts"]
    if fresh.shape != problem.train_y.shape or val.shape != problem.val.labels.shape:
        return None
    return Counts(fresh, val, int(values["unknown"].sum()), int(values["backwards"].sum()))


def kept_of(case: CaseEvidence, problem: Problem) -> Kept | None:
    if case.weights is None:
        return None
    model = model_with(case.weights)
    fresh = problem.fresh
    return Kept(
        clean_loss=loss_of(model, problem.clean.features, problem.clean.labels),
        train_loss=loss_of(model, problem.train_x[fresh], problem.train_y[fresh]),
        best=best_checkpoint(case.case, case.seed),
    )


def leak_finding(label: str, counts: Counts) -> str | None:
    trained = int((counts.val > 0).sum())
    if counts.backwards == 0:
        return f"{label}: no backward pass of your loop reached the model's output"
    if counts.unknown:
        return (
            f"{label}: {counts.unknown} rows your loop trained on are not rows of the data as "
            "given, so nothing shows they are not validation examples; train on the rows as "
            "they are"
        )
    if trained:
        return (
            f"{label}: {trained} of the {len(counts.val)} validation examples were trained on "
            "(among the rows your loop trained on are exact copies of them), so validation "
            "scores them as if the model had never seen them"
        )
    return None


def fit_findings(label: str, kept: Kept) -> tuple[str | None, str | None]:
    """(overfit, underfit): at most one of them, when the kept weights are beyond the band."""
    if kept.above <= BAND:
        return None, None
    text = (
        f"{label}: the weights you kept lose {kept.clean_loss:.3f} nats on held-out examples, "
        f"{kept.above:.2f} more than the best epoch of the judge's honest replay of this "
        f"training ({kept.best.clean_loss:.3f}); their loss on the training rows is "
        f"{kept.train_loss:.3f}, against {kept.best.train_loss:.3f} at that epoch"
    )
    if kept.train_loss < kept.best.train_loss:
        return text + ": they have memorised their training rows, kept too late", None
    return None, text + ": they stopped short of what the data allows, or were held back"


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    with one_thread():
        return assess_cases(exercise, cases)


def assess_cases(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    measurements: dict[str, float | int | bool | str | None] = {}
    leaks: list[str] = []
    overfit: list[str] = []
    underfit: list[str] = []
    unread: list[CaseEvidence] = []
    unscored: list[CaseEvidence] = []
    signature = None
    for case in cases:
        problem = build(case.case, case.seed)
        counts = counts_of(case, problem)
        if counts is None:
            unread.append(case)
        else:
            measurements[f"validation examples trained on ({case.label})"] = int(
                (counts.val > 0).sum()
            )
            measurements[f"unknown rows trained on ({case.label})"] = counts.unknown
            measurements[f"fresh rows trained on ({case.label})"] = int((counts.fresh > 0).sum())
            found = leak_finding(case.label, counts)
            if found:
                leaks.append(found)
        kept = kept_of(case, problem)
        if kept is None:
            unscored.append(case)
            continue
        measurements[f"held-out loss of the kept weights ({case.label})"] = kept.clean_loss
        measurements[f"best held-out loss of the replay ({case.label})"] = kept.best.clean_loss
        measurements[f"above the best ({case.label})"] = kept.above
        measurements[f"training loss of the kept weights ({case.label})"] = kept.train_loss
        measurements[f"training loss at the best ({case.label})"] = kept.best.train_loss
        measurements[f"best epoch of the replay ({case.label})"] = kept.best.epoch
        too_late, too_soon = fit_findings(case.label, kept)
        overfit += [too_late] if too_late else []
        underfit += [too_soon] if too_soon else []
        if case.case == SIGNATURE_CASE and counts is not None and case.weights is not None:
            signature = signature_of(problem, case.weights, counts, kept)
    checks: list[CheckResult] = []
    if unread:
        checks.append(missing_evidence(exercise, "validation-kept-out", unread))
    else:
        passed = "No validation example, nor any copy of one, was trained on, on either table."
        checks.append(findings_check(exercise, "validation-kept-out", leaks, passed))
    band = f"On both tables the kept weights lose within {BAND} nats of the held-out loss of the "
    for key, findings, passed in (
        ("not-overfit", overfit, band + "best epoch of the judge's replay: not kept too late."),
        ("not-underfit", underfit, band + "best epoch of the judge's replay: not stopped short."),
    ):
        if unscored:
            checks.append(missing_evidence(exercise, key, unscored))
        else:
            checks.append(findings_check(exercise, key, findings, passed))
    return Assessment(checks, measurements, signature)


def signature_of(
    problem: Problem, weights: dict[str, torch.Tensor], counts: Counts, kept: Kept
) -> OverfittingSignature:
    """The drill's signature of the kept weights, as the drill reads the end of a run."""
    model = model_with(weights)
    fresh_rows = torch.nonzero(counts.fresh > 0).flatten()
    val_rows = torch.nonzero(counts.val > 0).flatten()
    features = torch.cat([problem.train_x[fresh_rows], problem.val.features[val_rows]])
    labels = torch.cat([problem.train_y[fresh_rows], problem.val.labels[val_rows]])
    train = loss_of(model, features, labels) if len(labels) else kept.train_loss
    val = loss_of(model, problem.val.features, problem.val.labels)
    clean = kept.clean_loss
    duplicates = len(val_rows)
    return OverfittingSignature(
        train_examples=len(labels),
        leaked_examples=COPIED[SIGNATURE_CASE],
        duplicates_found=duplicates,
        val_examples=len(problem.val),
        clean_examples=len(problem.clean),
        steps=counts.backwards,
        final_train_loss=train,
        final_val_loss=val,
        final_gap=val - train,
        clean_loss_at_best_step=clean,
        min_clean_loss=kept.best.clean_loss,
        final_clean_loss=clean,
        clean_gap=clean - train,
        val_optimism=clean - val,
        optimism_noise=difference_noise(model, problem.val, problem.clean),
        noise_floor=noise_floor(problem.clean),
        chance_loss=math.log(CONFIG.task.classes),
        expected_optimism=duplicates / len(problem.val) * (clean - train),
    )
