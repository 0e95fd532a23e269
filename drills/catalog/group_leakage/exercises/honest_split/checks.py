"""Runs outside the sandbox: the split the learner's validation rows make, audited here, and the
drill's MLP trained on it here, so nothing the learner's code says about its split is read.

Training is every row not chosen for validation. Thresholds, from the reference solution, two
other right splits and four wrong ones on seeds 0-4 (three hidden runs each):
- VALIDATION_SHARE: about a quarter of the rows is asked for; 15-35% is accepted, so that a
  right split is not failed for its arithmetic (drawing whole groups gives 25.0-25.3%; drawing
  a third of the users and moving the flagged ones back, 21.9-29.3%), while a validation set
  too small to score anything is.
- Users and near copies: none at all may cross. The wrong splits of the fixtures let across
  171-265 rows of shared users (at 2 and 4 reviews per user) or 27-89 near copies on every
  hidden run they are wrong on; the audits are the drill's own
  (drills/catalog/group_leakage/audit.py).
- The trained model (4 reviews per user) fills the drill's signature and its verdict: "honest"
  when no audit flags a row, otherwise the leak the scores show.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from drills.catalog.group_leakage.audit import near_copies_of, shared_users
from drills.catalog.group_leakage.exercises.honest_split.problem import (
    CONFIG,
    ROWS_PER_USER,
    TRAINED_AT,
    Problem,
    build,
)
from drills.catalog.group_leakage.problem import Rows
from drills.catalog.group_leakage.signature import GroupLeakageSignature
from drills.catalog.group_leakage.train import fit, measure
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import Assessment, CaseEvidence, findings_check, missing_evidence
from drills.kit.run import Run

VALIDATION_SHARE = (0.15, 0.35)


class Quiet:
    """The judge's training draws no live curve."""

    def metric(self, name: str, step: int, value: float) -> None:
        pass


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {}  # no model comes back: the harness sends an empty weights blob


def sides(problem: Problem, chosen: torch.Tensor) -> tuple[Rows, Rows]:
    """(training, validation): validation is the chosen rows, training every other row."""
    in_validation = torch.zeros(len(problem.reviews), dtype=torch.bool)
    in_validation[chosen] = True
    rows = problem.reviews
    return rows.take(torch.nonzero(~in_validation).flatten()), rows.take(chosen)


def chosen_rows(case: CaseEvidence) -> torch.Tensor | None:
    values = case.values or {}
    chosen = values.get("validation")
    return None if chosen is None or case.error else chosen


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    size: list[str] = []
    users: list[str] = []
    copies: list[str] = []
    measurements: dict[str, float | int | bool | str | None] = {}
    signature = None
    for case in cases:
        chosen = chosen_rows(case)
        if chosen is None:
            continue
        problem = build(case.case, case.seed)
        total = len(problem.reviews)
        share = len(chosen) / total
        measurements[f"validation share ({case.label})"] = share
        if len(torch.unique(chosen)) != len(chosen):
            size.append(f"{case.label}: some rows are chosen for validation more than once")
        elif not VALIDATION_SHARE[0] <= share <= VALIDATION_SHARE[1]:
            size.append(
                f"{case.label}: {share:.1%} of the reviews went to validation; about a quarter "
                "is asked for"
            )
        train, val = sides(problem, torch.unique(chosen))
        crossing = int(shared_users(train.users, val.users).sum())
        close = int(near_copies_of(train.features, val.features).sum())
        measurements[f"validation rows whose writer is in training ({case.label})"] = crossing
        measurements[f"validation rows with a training row within 0.2 ({case.label})"] = close
        if crossing:
            users.append(
                f"{case.label}: {crossing} validation reviews were written by users who also "
                "have reviews in training"
            )
        if close:
            copies.append(
                f"{case.label}: {close} validation reviews have a training review closer than "
                "0.2 in the features, a copy with the text barely changed"
            )
        if case.case == TRAINED_AT:
            signature = trained_signature(problem, train, val, case.seed)
    errored = [case for case in cases if chosen_rows(case) is None]
    checks: list[CheckResult] = []
    for key, found, passed in (
        ("validation-size", size, "About a quarter of the reviews go to validation, once each."),
        ("users-apart", users, "No user has reviews on both sides, in any hidden run."),
        ("no-near-copies", copies, "No validation review has a near copy in training."),
    ):
        if errored:
            checks.append(missing_evidence(exercise, key, errored))
        else:
            checks.append(findings_check(exercise, key, found, passed))
    return Assessment(checks, measurements, signature)


def trained_signature(problem: Problem, train: Rows, val: Rows, seed: int) -> GroupLeakageSignature:
    """The drill's MLP trained on the learner's split, measured as the drill measures a run."""
    config = CONFIG
    known = problem.fresh.take(
        torch.nonzero(shared_users(train.users, problem.fresh.users)).flatten()
    )
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = fit(config, Run(seed, Quiet()), train, val, problem.unseen)
    signature = measure(config, model, train, val, problem.unseen, known, 0)
    signature.rows_per_user = ROWS_PER_USER[TRAINED_AT]
    return signature
