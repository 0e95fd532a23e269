"""What the exercise pages and the API show: an exercise to a learner, and one run's result.

The reference solution appears only once it is earned and asked for (app/exercises/service.py);
nothing else on these pages depends on hidden data: the checks' messages are written to help
without giving the hidden seeds or reference numbers away (drills.exercises).
"""

from typing import Any

from sqlmodel import Session

from app.exercises import service
from app.exercises.judgements import run_of
from app.exercises.models import ExerciseRun
from app.runs import evidence
from app.runs.models import Attempt
from drills.core.registry import get_drill
from drills.exercises.contract import Exercise
from drills.exercises.starter_diff import diff_from_starter
from drills.sandbox import available as sandbox_available

# The one chart of a run's page: what the harness measured while the learner's code trained.
# Display only: the judge decides from the trained weights, never from these points.
CURVE_CHART = {
    "key": "training",
    "title": "Training, as the harness measured it",
    "metrics": ["*"],
    "y_label": "value",
    "log_y": False,
    "references": [],
    "kind": "lines",
}


def summary(exercise: Exercise) -> dict[str, Any]:
    return {
        "slug": exercise.slug,
        "title": exercise.title,
        "drill": exercise.drill,
        "provides": list(exercise.provides),
        "hints": len(exercise.hints),
        "url": f"/api/exercises/{exercise.slug}",
        "page": f"/exercises/{exercise.slug}",
    }


def exercise_context(session: Session, *, exercise: Exercise, learner_id: int) -> dict[str, Any]:
    """The exercise as its learner sees it now: story, starter, the help taken, their runs."""
    help_taken = service.help_of(session, learner_id=learner_id, exercise=exercise)
    runs = service.runs_of(session, learner_id=learner_id, exercise=exercise)
    shown = help_taken.solution_shown_at is not None
    unavailable = sandbox_available()
    return {
        "exercise": exercise,
        "hints_shown": list(exercise.hints[: help_taken.hints_taken]),
        "hints_left": len(exercise.hints) - help_taken.hints_taken,
        "solution_earned": service.solution_earned(
            session, learner_id=learner_id, exercise=exercise
        ),
        "solution": exercise.solution if shown else None,
        "solution_diff": diff_from_starter(exercise, exercise.solution, to="solution.py")
        if shown
        else None,
        # The editor opens on the learner's latest code, so a run never costs them their work.
        "code": runs[0][1].code if runs else exercise.starter,
        "runs": [run_row(attempt, run) for attempt, run in runs],
        "sandbox_unavailable": unavailable,
    }


def run_row(attempt: Attempt, run: ExerciseRun) -> dict[str, Any]:
    score = service.score_of(run)
    return {
        "id": attempt.id,
        "status": attempt.status,
        "judgement": run.judgement,
        "score": score.value if score else None,
        "score_why": score.why if score else None,
        "created_at": attempt.created_at,
        "page": f"/exercises/{run.exercise_slug}/runs/{attempt.id}",
    }


def run_context(session: Session, *, exercise: Exercise, attempt: Attempt) -> dict[str, Any]:
    """One run: its live or final curve, and once ended the checks, the diff and the output."""
    assert attempt.id is not None
    run = run_of(session, attempt)
    series, cursor = evidence.series_and_cursor(session, attempt_id=attempt.id)
    hypotheses = {item.key: item.text for item in get_drill(attempt.drill_slug).hypotheses}
    return {
        "verdict_text": hypotheses.get(attempt.observed_hypothesis or ""),
        "exercise": exercise,
        "attempt": attempt,
        "run": run,
        "score": service.score_of(run) if run else None,
        "series": series,
        "chart": CURVE_CHART,
        "cursor": cursor,
        "urls": run_links(attempt),
    }


def run_public(session: Session, *, attempt: Attempt) -> dict[str, Any]:
    """A run as the API answers it."""
    assert attempt.id is not None
    run = run_of(session, attempt)
    score = service.score_of(run) if run else None
    return {
        "id": attempt.id,
        "exercise": attempt.exercise_slug,
        "status": attempt.status,
        "error": attempt.error,
        "command": attempt.command,
        "created_at": attempt.created_at,
        "started_at": attempt.started_at,
        "finished_at": attempt.finished_at,
        "code_sha256": run.code_sha256 if run else None,
        "diff": run.diff if run else None,
        "hints_taken": run.hints_taken if run else 0,
        "solution_shown": run.solution_shown if run else False,
        "judgement": run.judgement if run else None,
        "checks": (run.checks or []) if run else [],
        "score": score.value if score else None,
        "stdout": run.stdout if run else None,
        "stderr": run.stderr if run else None,
        "metrics": evidence.metric_series(session, attempt_id=attempt.id),
        "urls": run_links(attempt),
    }


def run_links(attempt: Attempt) -> dict[str, str]:
    return {
        "self": f"/api/exercises/runs/{attempt.id}",
        "events": f"/api/exercises/runs/{attempt.id}/events",
        # The file the replay command (attempt.command) reads, exactly as submitted.
        "code": f"/api/exercises/runs/{attempt.id}/code",
        "page": f"/exercises/{attempt.exercise_slug}/runs/{attempt.id}",
    }
