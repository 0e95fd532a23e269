"""What the case page shows of a verdict given in code (issue 28): before the verdict, a link to
each exercise that any of the case's causes names (the same links whatever the draw); once
revealed, the learner's changes beside the reference solution's, the judge's checks, and why the
fix point was or was not earned. The code verdict itself is the exercises feature's
(app/exercises/case_verdict.py): this module only reads its table."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from app.cases.models import CaseAttempt, CaseRun, CaseRunKind
from app.exercises.models import ExerciseRun
from app.runs.models import Attempt
from drills.cases.contract import Case
from drills.exercises.registry import UnknownExercise, get_exercise
from drills.exercises.starter_diff import diff_from_starter


def offered(case: Case, case_attempt: CaseAttempt) -> list[dict[str, str]]:
    """The code verdicts the case offers: from all its causes, never from the drawn one."""
    # Neutral words, not the exercise's title: a title names its drill, which the page keeps to
    # itself before the verdict (drills/cases/evidence.py telltales).
    slugs = case.exercises()
    return [
        {
            "title": "Open the loop in the editor"
            + (f" ({number} of {len(slugs)})" if len(slugs) > 1 else ""),
            "url": f"/cases/attempts/{case_attempt.id}/code/{slug}",
        }
        for number, slug in enumerate(slugs, start=1)
    ]


def code_run_of(session: Session, case_attempt_id: int) -> tuple[Attempt, ExerciseRun] | None:
    row = session.exec(
        select(Attempt, ExerciseRun)
        .join(CaseRun, col(CaseRun.attempt_id) == Attempt.id)
        .join(ExerciseRun, col(ExerciseRun.attempt_id) == Attempt.id)
        .where(CaseRun.case_attempt_id == case_attempt_id, CaseRun.kind == CaseRunKind.fix)
    ).first()
    return None if row is None else (row[0], row[1])


def revealed_code(session: Session, case: Case, case_attempt: CaseAttempt) -> dict[str, Any]:
    """The reveal's code section, or nothing when the verdict was a fix from the list."""
    assert case_attempt.id is not None
    found = code_run_of(session, case_attempt.id)
    if found is None:
        return {}
    attempt, run = found
    score = case_attempt.score or {}
    section: dict[str, Any] = {
        "run_page": f"/exercises/{run.exercise_slug}/runs/{attempt.id}",
        "judgement": run.judgement,
        "status": attempt.status,
        "checks": run.checks or [],
        "learner_diff": run.diff,
        "why": why(case, case_attempt, score, run),
    }
    try:
        exercise = get_exercise(run.exercise_slug)
    except UnknownExercise:  # retired since: the learner's diff still stands
        section |= {"title": run.exercise_slug, "reference_diff": ""}
    else:
        reference = diff_from_starter(exercise, exercise.solution, to="solution.py")
        section |= {"title": exercise.title, "reference_diff": reference}
    return {"code_verdict": section}


def why(case: Case, case_attempt: CaseAttempt, score: dict[str, Any], run: ExerciseRun) -> str:
    """In a sentence, why the code earned the fix point or not (the first reason that holds)."""
    own = case.case_set.cause(case_attempt.cause).exercise
    if not score.get("exercise_fits"):
        if own is None:
            return (
                "The cause this attempt hid has no loop to fix in code, so no code verdict "
                "earns the fix point here: its fix is the one from the list."
            )
        return (
            "This loop carries a different bug from the one this attempt hid: repairing it "
            "leaves the hidden cause in place, so it earns no fix point."
        )
    if not score.get("cause_named"):
        return "You fixed the right loop but named another cause: the fix point needs both."
    if run.judgement is None:
        return "Your code's run ended before the judge could read it, so the fix is not verified."
    if run.judgement != "passed":
        return "The judge did not pass your code: see its checks below."
    return "You named the cause, fixed its loop, and the judge passed your code."
