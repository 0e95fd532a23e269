"""What the templates need, gathered in one place for each page and its partials."""

import math
from typing import Any

from sqlmodel import Session, col, select

from app.accounts.models import User
from app.grading import submissions
from app.grading.models import RUBRIC, Submission
from app.runs import evidence, replays, run_picks
from app.runs.attempts import runs_ahead
from app.runs.models import Attempt, AttemptStatus, Explanation
from app.web.access import can_review_work_of, cohorts_joined_by
from app.web.templating import number
from drills.core.catalogue import describe
from drills.core.contract import Drill
from drills.core.registry import get_drill
from drills.core.source import training_source


def observation_rows(
    drill: dict[str, Any], signature: dict[str, Any], *, verdict: str | None
) -> list[dict[str, Any]]:
    """The drill's observations that this run reported: label, observed value, and the
    theoretical expectation where the drill names one and it fits the run: a reference that
    belongs to some hypotheses is shown only when the run's verdict is one of them (a clean run
    is not set beside the floor shuffled labels would give; the learner's own hypothesis gets
    its numbers beside it, `prediction_expectations`)."""
    rows: dict[str, dict[str, Any]] = {}
    for item in drill["observations"]:
        if item["key"] not in signature:
            continue
        applies = not item.get("reference_for") or verdict in item["reference_for"]
        reference = signature.get(item["reference"]) if item["reference"] and applies else None
        if item["key"] in rows:
            # A number observed once, with another reference for other hypotheses (the two-step
            # floor of a double shift): it replaces the first one where it applies.
            if reference is not None:
                rows[item["key"]]["reference"] = reference
            continue
        rows[item["key"]] = {
            "label": item["label"],
            "value": signature.get(item["key"]),
            "reference": reference,
        }
    return list(rows.values())


def prediction_expectations(
    drill: dict[str, Any], signature: dict[str, Any], *, hypothesis: str, verdict: str | None
) -> list[dict[str, Any]]:
    """The theoretical numbers that belong to the learner's hypothesis, where the run's verdict
    is another one: [{"label", "value" (observed), "expected"}], shown beside that hypothesis
    so the learner reads the number their prediction implied against what the run did."""
    if hypothesis == verdict:
        return []  # the table beside the verdict shows them
    rows = []
    for item in drill["observations"]:
        if not item["reference"] or hypothesis not in item.get("reference_for", []):
            continue
        expected = signature.get(item["reference"])
        if item["key"] in signature and _finite(expected):
            rows.append(
                {"label": item["label"], "value": signature[item["key"]], "expected": expected}
            )
    return rows


def _finite(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def numeric_rows(drill: dict[str, Any], attempt: Attempt) -> list[dict[str, Any]]:
    """One line per number the learner predicted: the prediction, what the run reported, the band
    and the stored score ("You predicted 0.69 nats; the loss settled at 0.7154 (within ±15%:
    matched)")."""
    declared = {item["key"]: item for item in drill.get("numeric_predictions", [])}
    scores = attempt.numeric_matched or {}
    rows = []
    # In the drill's order: PostgreSQL's JSONB keeps no order of the predictions' own. A number
    # the drill no longer asks for is left out.
    for key, item in declared.items():
        if key not in attempt.numeric_predictions:
            continue
        predicted = attempt.numeric_predictions[key]
        observed = (attempt.signature or {}).get(key)
        matched = scores.get(key)
        unit = "" if item["unit"] == "step" else f" {item['unit']}"
        said = f"You predicted {number(predicted)}{unit}"
        if matched is None:
            text = f"{said}; the run reported no such number (not scored)."
        else:
            band = "exactly" if item["band"] == "exactly" else f"within {item['band']}"
            outcome = "matched" if matched else "missed"
            text = f"{said}; {item['reported_as']} {number(observed)} ({band}: {outcome})."
        rows.append({"key": key, "matched": matched, "text": text})
    return rows


def reference_lines(drill: dict[str, Any], signature: dict[str, Any]) -> dict[str, list[Any]]:
    """Per chart key, the constant lines it draws: [{"label", "value"}] taken from this run's
    signature (a theoretical level of this run's own data), finite numbers only."""
    lines: dict[str, list[Any]] = {}
    for chart in drill["charts"]:
        values = [
            {"label": item["label"], "value": signature.get(item["signature_key"])}
            for item in chart.get("references", [])
        ]
        lines[chart["key"]] = [
            line
            for line in values
            if isinstance(line["value"], int | float) and math.isfinite(line["value"])
        ]
    return lines


def attempt_context(
    session: Session, attempt: Attempt, viewer: User | None = None
) -> dict[str, Any]:
    assert attempt.id is not None
    drill = describe(get_drill(attempt.drill_slug))
    hypotheses = {item["key"]: item["text"] for item in drill["hypotheses"]}
    signature = attempt.signature or {}
    verdict = attempt.observed_hypothesis
    observations = observation_rows(drill, signature, verdict=verdict)
    expectations = prediction_expectations(
        drill, signature, hypothesis=attempt.hypothesis, verdict=verdict
    )
    series, cursor = evidence.series_and_cursor(session, attempt_id=attempt.id)
    return {
        "attempt": attempt,
        "drill": drill,
        "series": series,
        "cursor": cursor,
        "references": reference_lines(drill, attempt.signature or {}),
        "predicted_text": hypotheses.get(attempt.hypothesis, attempt.hypothesis),
        "observed_text": hypotheses.get(attempt.observed_hypothesis or "", None),
        "observations": observations,
        "prediction_expectations": expectations,
        "numeric_rows": numeric_rows(drill, attempt),
        "parameters": (attempt.diagnostics or {}).get("parameters", []),
        # The code that ran, its variant's lines marked: once the run has ended (a learner
        # predicts first), and only on a drill's own page (a case's or a round's knobs are
        # what its learner must find).
        "code_files": training_source(get_drill(attempt.drill_slug), attempt.knobs)
        if attempt.final and attempt.is_drill_page_run
        else [],
        "explanation": evidence.latest_explanation(session, attempt_id=attempt.id),
        "explanation_errors": {},
        "replays": replays.replays_of(session, attempt_id=attempt.id),
        "can_replay": viewer is not None
        and attempt.final
        and can_review_work_of(session, viewer, attempt.learner_id),
        "can_explain": viewer is not None and viewer.id == attempt.learner_id,
        "runs_ahead": runs_ahead(session, attempt) if attempt.status == AttemptStatus.queued else 0,
        "can_cancel": viewer is not None
        and viewer.id == attempt.learner_id
        and not attempt.final
        and attempt.cancel_requested_at is None,
    }


def submission_versions(session: Session, versions: list[Submission]) -> list[dict[str, Any]]:
    return [
        {
            "submission": version,
            "reviews": submissions.reviews_of(session, submission_id=version.id),
        }
        for version in versions
        if version.id is not None
    ]


def newest_explained(
    session: Session, candidates: list[Attempt]
) -> tuple[Attempt, Explanation] | None:
    """Of the runs that may serve as evidence, the one explained back most recently, with that
    explanation: what the learner already wrote, and the run they wrote it about."""
    by_id = {attempt.id: attempt for attempt in candidates}
    if not by_id:
        return None
    explanation = session.exec(
        select(Explanation)
        .where(col(Explanation.attempt_id).in_(list(by_id)))
        .order_by(col(Explanation.id).desc())
    ).first()
    return None if explanation is None else (by_id[explanation.attempt_id], explanation)


def submission_draft(versions: list[Submission], explained: Explanation | None) -> dict[str, str]:
    """The text the submit form starts from: the last submitted version's (a resubmission after
    "changes requested" edits what the reviewer read), else the newest explain-back of a run
    that may serve as evidence (the four questions are the same: nobody answers them twice),
    else nothing."""
    if versions:
        return {name: getattr(versions[0], name) for name in submissions.EXPLANATION_FIELDS}
    if explained is not None:
        return {name: getattr(explained, name) for name in submissions.EXPLANATION_FIELDS}
    return {}


def submit_context(
    session: Session, *, drill: Drill, user: User, chosen: dict[str, str] | None = None
) -> dict[str, Any]:
    """The submit section: the runs that may serve as evidence, the draft, every version so far.
    `chosen` keeps the runs a learner already picked when the lists are refreshed."""
    assert user.id is not None
    failed, fixed = submissions.candidates(session, drill=drill, learner_id=user.id)
    versions = submissions.history(session, learner_id=user.id, drill_slug=drill.slug)
    explained = newest_explained(session, failed + fixed)
    # The pickers start at the run the learner explained (else the newest), not merely the newest.
    picked: dict[str, str] = {}
    if explained is not None:
        run = explained[0]
        side = "failed_attempt_id" if run in failed else "fixed_attempt_id"
        picked[side] = str(run.id)
    return {
        "drill": describe(drill),
        "failed_candidates": failed,
        "fixed_candidates": fixed,
        "chosen_runs": chosen or picked,
        "submission_draft": submission_draft(versions, explained[1] if explained else None),
        # Whose queue a pending version is in: the cohort's instructors, or only an admin's.
        "in_a_cohort": bool(cohorts_joined_by(session, learner_id=user.id)),
        "submission_errors": {},
        "versions": submission_versions(session, versions),
        "rubric_labels": RUBRIC,
    }


def drill_page_context(session: Session, *, drill: Drill, user: User) -> dict[str, Any]:
    assert user.id is not None
    history = evidence.attempts_for(session, learner_id=user.id, drill_slug=drill.slug)
    # A run still in flight keeps its live panel across a reload (its points are stored).
    in_flight = next((attempt for attempt in history if not attempt.final), None)
    live = attempt_context(session, in_flight, user) if in_flight is not None else {}
    page = live | submit_context(session, drill=drill, user=user)
    return page | run_picks.history_context(history)
