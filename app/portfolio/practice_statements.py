"""Statements of practice beyond the drills: a revealed case, a spaced review, an answered
curve-diagnosis round and a judged exercise run (xAPI verbs solved / missed, rated, answered,
passed / failed)."""

from typing import Any

from app.accounts.models import User
from app.cases.models import CaseAttempt
from app.exercises.models import ExerciseRun
from app.portfolio.xapi import agent, timestamp, verb
from app.practice.models import ReviewLogEntry
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt


def case_attempt_id(case_attempt_pk: int) -> str:
    return f"drillbook:case-attempt:{case_attempt_pk}"


def spaced_review_id(entry_pk: int) -> str:
    return f"drillbook:spaced-review:{entry_pk}"


def round_id(round_pk: int) -> str:
    return f"drillbook:curve-round:{round_pk}"


def exercise_run_id(attempt_pk: int) -> str:
    return f"drillbook:exercise-run:{attempt_pk}"


def exercise_statement(attempt: Attempt, run: ExerciseRun, learner: User | None) -> dict[str, Any]:
    """A judged run of the learner's code: the file exactly as run (and its sha256), its diff
    from the starter, each check the judge made, and the help taken before it."""
    from app.exercises.service import score_of
    from drills.exercises.registry import UnknownExercise, get_exercise

    assert attempt.id is not None
    try:
        name = get_exercise(run.exercise_slug).title
    except UnknownExercise:  # an exercise since retired: its record still stands
        name = run.exercise_slug
    judgement = run.judgement or attempt.status
    score = score_of(run)
    return {
        "id": exercise_run_id(attempt.id),
        "actor": agent(learner),
        "verb": verb("passed" if judgement == "passed" else "failed"),
        "object": {
            "id": f"urn:drillbook:exercise:{run.exercise_slug}",
            "definition": {"name": {"en": name}},
        },
        "result": {
            "success": judgement == "passed",
            "judgement": judgement,
            "score": {"scaled": score.value} if score else None,
            "checks": run.checks or [],
            "hints_taken": run.hints_taken,
            "solution_shown": run.solution_shown,
        },
        "context": {
            "drill": attempt.drill_slug,
            "command": attempt.command,
            "seed": attempt.seed,
            "code": run.code,
            "code_sha256": run.code_sha256,
            "diff": run.diff,
        },
        "timestamp": timestamp(attempt.finished_at),
    }


def case_statement(case_attempt: CaseAttempt, learner: User | None) -> dict[str, Any]:
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


def spaced_review_statement(entry: ReviewLogEntry, learner: User | None) -> dict[str, Any]:
    """One spaced review: the answer typed from memory before the model answer was shown, and
    how the learner rated their recall (which set when the item comes back)."""
    assert entry.id is not None
    return {
        "id": spaced_review_id(entry.id),
        "actor": agent(learner),
        "verb": verb("rated"),
        "object": {
            "id": f"urn:drillbook:review-item:{entry.item_key}",
            "definition": {"name": {"en": review_item_name(entry.item_key)}},
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


def review_item_name(item_key: str) -> str:
    """A track item by its prompt; any other item (a cohort's, a miss) by its key. The HTML
    page names it the same way, so a row reads as its statement does."""
    from drills.practice.items import UnknownItem, get_item

    if item_key.startswith("track:"):
        try:
            return get_item(item_key.removeprefix("track:")).prompt
        except UnknownItem:  # retired from the track: the record still stands
            pass
    return item_key


def round_statement(diagnosis_round: DiagnosisRound, learner: User | None) -> dict[str, Any]:
    """An answered curve round: the five-part diagnosis, how it scored against the run's own
    reading, and the setup that was hidden until then."""
    assert diagnosis_round.id is not None
    score = diagnosis_round.score or {}
    return {
        "id": round_id(diagnosis_round.id),
        "actor": agent(learner),
        "verb": verb("answered"),
        "object": {
            "id": f"urn:drillbook:curve-round:{diagnosis_round.variant_key}",
            "definition": {"name": {"en": f"Curve round on {diagnosis_round.drill_slug}"}},
        },
        "result": {
            "response": diagnosis_round.diagnosis,
            "score": {"raw": score.get("points"), "max": 2},
            "success": bool(score.get("leading_right")),
            "scoring": score,
        },
        "context": {
            "day": diagnosis_round.day.isoformat(),
            "round_number": diagnosis_round.number,
            "drill": diagnosis_round.drill_slug,
            "seed": diagnosis_round.seed,
            "knobs": diagnosis_round.knobs,
        },
        "timestamp": timestamp(diagnosis_round.answered_at),
    }
