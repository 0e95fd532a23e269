"""xAPI-shaped statements of a learner's work: one per attempt, per submission, per review, per
revealed case and per spaced review.

Each statement carries `digest`, the sha256 of its own canonical JSON without that field, so a
reader can tell which record changed. Ids are stable ("drillbook:attempt:12"), so the same record
has the same id in every export.
"""

from datetime import UTC, datetime
from typing import Any

from app.models import (
    RUBRIC,
    Attempt,
    AttemptStatus,
    CaseAttempt,
    Replay,
    Review,
    ReviewLogEntry,
    Submission,
    User,
)
from app.portfolio.canonical import sha256_hex
from app.portfolio.records import Records, Series
from drills.core.digest import json_safe
from drills.core.registry import UnknownDrill, get_drill

_VERB_BY_STATUS = {
    AttemptStatus.queued: "attempted",
    AttemptStatus.running: "attempted",
    AttemptStatus.succeeded: "completed",
    AttemptStatus.failed: "failed",
    AttemptStatus.timed_out: "failed",
    AttemptStatus.resource_limit: "failed",
    AttemptStatus.cancelled: "terminated",
}
_VERB_BY_DECISION = {"accepted": "accepted", "changes_requested": "changes-requested"}


def attempt_id(attempt_pk: int) -> str:
    return f"drillbook:attempt:{attempt_pk}"


def submission_id(submission_pk: int) -> str:
    return f"drillbook:submission:{submission_pk}"


def review_id(review_pk: int) -> str:
    return f"drillbook:review:{review_pk}"


def case_attempt_id(case_attempt_pk: int) -> str:
    return f"drillbook:case-attempt:{case_attempt_pk}"


def spaced_review_id(entry_pk: int) -> str:
    return f"drillbook:spaced-review:{entry_pk}"


def statements_for(records: Records) -> list[dict[str, Any]]:
    """Every attempt, submission and review of these learners, learner by learner, in the order
    the records were made."""
    out: list[dict[str, Any]] = []
    for learner_records in records.learners:
        learner = learner_records.learner
        out += [
            digested(
                _attempt(
                    attempt,
                    learner,
                    records.series.get(attempt.id or 0, {}),
                    records.replays.get(attempt.id or 0, []),
                )
            )
            for attempt in learner_records.attempts
        ]
        for submission in learner_records.submissions:
            out.append(digested(_submission(submission, learner)))
            out += [
                digested(_review(review, submission, learner, records.person(review.instructor_id)))
                for review in records.reviews.get(submission.id or 0, [])
            ]
        out += [
            digested(_case(case_attempt, learner)) for case_attempt in learner_records.case_attempts
        ]
        out += [digested(_spaced_review(entry, learner)) for entry in learner_records.review_log]
    return out


def digested(statement: dict[str, Any]) -> dict[str, Any]:
    plain: dict[str, Any] = json_safe(statement)
    return plain | {"digest": sha256_hex(plain)}


def timestamp(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    # SQLite hands datetimes back without their zone; the app stores them in UTC.
    aware = moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return aware.astimezone(UTC).isoformat().replace("+00:00", "Z")


def agent(user: User | None) -> dict[str, Any]:
    if user is None:
        return {"objectType": "Agent", "name": "(deleted account)"}
    return {
        "objectType": "Agent",
        "name": user.display_name,
        "account": {"homePage": "urn:drillbook", "name": user.username},
    }


def verb(name: str) -> dict[str, Any]:
    return {"id": f"urn:drillbook:verb:{name}", "display": {"en": name}}


def drill_activity(slug: str, version: str | None = None) -> dict[str, Any]:
    try:
        drill = get_drill(slug)
        title, summary = drill.title, drill.summary
    except UnknownDrill:  # a drill retired since the record was made
        title, summary = slug, ""
    definition: dict[str, Any] = {"name": {"en": title}, "description": {"en": summary}}
    if version is not None:
        definition["version"] = version
    return {"objectType": "Activity", "id": f"urn:drillbook:drill:{slug}", "definition": definition}


def _replay(replay: Replay) -> dict[str, Any]:
    """A replay of the attempt's stored command, as checked on the server."""
    return {
        "requested": timestamp(replay.created_at),
        "status": replay.status,
        "verdict": replay.verdict,
        "digest": replay.digest,
        "max_relative_difference": replay.max_relative_difference,
        "first_difference": replay.first_difference,
        "environment": replay.environment,
        "error": replay.error,
    }


def _attempt(
    attempt: Attempt, learner: User | None, series: Series, replays: list[Replay]
) -> dict[str, Any]:
    assert attempt.id is not None
    return {
        "id": attempt_id(attempt.id),
        "actor": agent(learner),
        "verb": verb(_VERB_BY_STATUS.get(AttemptStatus(attempt.status), "attempted")),
        "object": drill_activity(attempt.drill_slug, attempt.drill_version),
        "result": {
            "status": attempt.status,
            "success": attempt.status == AttemptStatus.succeeded,
            "completion": attempt.final,
            "prediction": {
                "hypothesis": attempt.hypothesis,
                "text": attempt.prediction_text,
                "predicted_at": timestamp(attempt.predicted_at),
                "numeric": attempt.numeric_predictions,
            },
            "observed_hypothesis": attempt.observed_hypothesis,
            "prediction_matched": attempt.prediction_matched,
            # Per predicted number: matched within the drill's band, or null (no such number).
            "numeric_matched": attempt.numeric_matched,
            "error": attempt.error,
            "signature": attempt.signature,
            # The drill's own sha256 of its metric series (see `python -m drills run --json`).
            "digest": attempt.digest,
            "diagnostics": attempt.diagnostics,
            "metrics": series,
            "compute_s": attempt.compute_s,
            "replays": [_replay(replay) for replay in replays],
        },
        "context": {
            "command": attempt.command,
            "environment": attempt.environment,
            "knobs": attempt.knobs,
            "seed": attempt.seed,
            "inputs": attempt.inputs,
        },
        "timestamp": timestamp(attempt.finished_at or attempt.created_at),
        "stored": timestamp(attempt.created_at),
    }


def _submission(submission: Submission, learner: User | None) -> dict[str, Any]:
    assert submission.id is not None
    return {
        "id": submission_id(submission.id),
        "actor": agent(learner),
        "verb": verb("submitted"),
        "object": drill_activity(submission.drill_slug),
        "result": {
            "status": submission.status,
            "explanation": {
                "mechanism": submission.mechanism,
                "right_tool": submission.right_tool,
                "wrong_tool": submission.wrong_tool,
                "next_check": submission.next_check,
            },
        },
        "context": {
            "version": submission.version,
            "failed_attempt": attempt_id(submission.failed_attempt_id),
            "fixed_attempt": attempt_id(submission.fixed_attempt_id),
        },
        "timestamp": timestamp(submission.created_at),
    }


def _review(
    review: Review, submission: Submission, learner: User | None, instructor: User | None
) -> dict[str, Any]:
    assert review.id is not None and submission.id is not None
    return {
        "id": review_id(review.id),
        "actor": agent(instructor),
        "verb": verb(_VERB_BY_DECISION.get(review.decision, review.decision)),
        "object": drill_activity(submission.drill_slug),
        "result": {
            "success": review.decision == "accepted",
            "score": {"raw": review.total, "min": 0, "max": 2 * len(RUBRIC)},
            "rubric": review.scores,
            "response": review.comment,
        },
        "context": {
            "learner": agent(learner),
            "statement": {"objectType": "StatementRef", "id": submission_id(submission.id)},
            "version": submission.version,
        },
        "timestamp": timestamp(review.created_at),
    }


def _case(case_attempt: CaseAttempt, learner: User | None) -> dict[str, Any]:
    """A revealed case: what the learner committed to, what they spent, and how it scored."""
    from drills.cases.registry import UnknownCase, get_case

    assert case_attempt.id is not None
    score = case_attempt.score or {}
    try:
        case = get_case(case_attempt.case_key)
        name, drill = case.title, case.case_set.drill
    except UnknownCase:  # a case since removed from the pool: its record still stands
        name, drill = case_attempt.case_key, None
    return {
        "id": case_attempt_id(case_attempt.id),
        "actor": agent(learner),
        "verb": verb(
            "solved" if score.get("cause_named") and score.get("fix_verified") else "missed"
        ),
        "object": {
            "id": f"urn:drillbook:case:{case_attempt.case_key}",
            "definition": {"name": {"en": name}},
        },
        "result": {
            "score": {"raw": score.get("points"), "max": 4},
            "success": bool(score.get("cause_named")),
            "diagnosis": case_attempt.diagnosis,
            "named_cause": case_attempt.named_cause,
            "fix": case_attempt.fix_key,
            "scoring": score,
        },
        "context": {
            "attempt_number": case_attempt.number,
            "drill": drill,
            "seed": case_attempt.seed,
            "knobs": case_attempt.knobs,
            "diagnosed_at": timestamp(case_attempt.diagnosed_at),
        },
        "timestamp": timestamp(case_attempt.revealed_at),
    }


def _spaced_review(entry: ReviewLogEntry, learner: User | None) -> dict[str, Any]:
    """One spaced review: the answer typed from memory before the model answer was shown, and
    how the learner rated their recall (which set when the item comes back)."""
    from drills.practice.items import UnknownItem, get_item

    assert entry.id is not None
    name = entry.item_key
    if entry.item_key.startswith("track:"):
        try:
            name = get_item(entry.item_key.removeprefix("track:")).prompt
        except UnknownItem:  # retired from the track: the record still stands
            pass
    return {
        "id": spaced_review_id(entry.id),
        "actor": agent(learner),
        "verb": verb("rated"),
        "object": {
            "id": f"urn:drillbook:review-item:{entry.item_key}",
            "definition": {"name": {"en": name}},
        },
        "result": {
            "response": entry.answer,
            "rating": entry.rating,
            "success": entry.rating != "again",
        },
        "context": {
            "days_since_last_review": entry.elapsed_days,
            "predicted_recall": entry.retrievability,
            "due_next": timestamp(entry.due_after),
        },
        "timestamp": timestamp(entry.reviewed_at),
    }
