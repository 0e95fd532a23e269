"""xAPI-shaped statements of a learner's work: one per attempt, per submission, per review, per
revealed case, per spaced review and per answered curve round (the last three:
app/portfolio/practice_statements.py; the shared shapes: app/portfolio/xapi.py).

Each statement carries `digest`, the sha256 of its own RFC 8785 canonical JSON without that
field (app/portfolio/canonical.py), so a reader can tell which record changed. Ids are stable
("drillbook:attempt:12"), so the same record has the same id in every export.
"""

from typing import Any

from app.accounts.models import User
from app.grading.models import RUBRIC, Review, Submission
from app.portfolio.practice_statements import (
    case_statement,
    exercise_statement,
    round_statement,
    spaced_review_statement,
)
from app.portfolio.records import Records, Series
from app.portfolio.xapi import agent, digested, drill_activity, timestamp, verb
from app.runs.models import Attempt, AttemptStatus
from app.runs.replay_models import Replay

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
            digested(case_statement(case_attempt, learner))
            for case_attempt in learner_records.case_attempts
        ]
        out += [
            digested(spaced_review_statement(entry, learner))
            for entry in learner_records.review_log
        ]
        out += [
            digested(round_statement(diagnosis_round, learner))
            for diagnosis_round in learner_records.rounds
        ]
        out += [
            digested(exercise_statement(attempt, run, learner))
            for attempt, run in learner_records.exercise_runs
        ]
    return out


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


def _context(attempt: Attempt) -> dict[str, Any]:
    """How the run was set up: withheld (null) while a hidden-bug run is in flight."""
    if attempt.setup_concealed:
        return {"command": None, "environment": None, "knobs": None, "seed": None, "inputs": None}
    return {
        "command": attempt.command,
        "environment": attempt.environment,
        "knobs": attempt.knobs,
        "seed": attempt.seed,
        "inputs": attempt.inputs,
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
        "context": _context(attempt),
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
