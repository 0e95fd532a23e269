"""What an instructor reads of a cohort's code exercises: each learner's standing on each
exercise (the grid), and per exercise the cohort's figures: who tried, the pass rate, the checks
failed most often (the cohort's misconceptions), the median tries to a first pass and the median
hints taken. Every figure is read from the stored runs and help rows, never kept on its own."""

from dataclasses import dataclass
from statistics import median
from typing import Any

from sqlmodel import Session, col, select

from app.exercises.models import ExerciseHelp, ExerciseRun
from app.exercises.views import run_row
from app.runs.models import Attempt
from drills.exercises.registry import all_exercises

# How many of an exercise's most failed checks the cohort page names.
TOP_CHECKS = 3


@dataclass(frozen=True)
class FailedCheck:
    title: str
    learners: int  # learners who failed it at least once


@dataclass(frozen=True)
class ExerciseFigures:
    slug: str
    title: str
    tried: int  # learners with at least one judged run
    passed: int  # of them, those with a pass
    after_solution: int  # of those, whose first pass came after the solution was shown
    failed_checks: list[FailedCheck]
    median_tries: float | None  # runs up to and including the first pass, over those who passed
    median_hints: float | None  # hints revealed, over those who tried

    @property
    def pass_rate(self) -> float | None:
        return self.passed / self.tried if self.tried else None


def _judged_runs(session: Session, learner_ids: list[int]) -> list[tuple[Attempt, ExerciseRun]]:
    if not learner_ids:
        return []
    rows = session.exec(
        select(Attempt, ExerciseRun)
        .join(ExerciseRun, col(ExerciseRun.attempt_id) == col(Attempt.id))
        .where(col(Attempt.learner_id).in_(learner_ids))
        .order_by(col(Attempt.id))
    ).all()
    return [(attempt, run) for attempt, run in rows]


def cohort_exercises(session: Session, learner_ids: list[int]) -> dict[str, Any]:
    """Each learner's standing on each exercise (passed if any run passed, else the latest
    run's judgement, and whether the pass came after the solution was shown), linking the run
    to read (its diff beside its checks); and the exercises' figures (`figures`)."""
    exercises = all_exercises()
    cells: dict[tuple[int, str], dict[str, Any]] = {}
    runs = _judged_runs(session, learner_ids)
    for attempt, run in runs:
        key = (attempt.learner_id, run.exercise_slug)
        cell = cells.setdefault(key, {"runs": 0, "passed": False, "after_solution": False})
        cell["runs"] += 1
        if not cell["passed"]:  # the first pass stays the one shown; else the latest run
            cell |= {"page": run_row(attempt, run)["page"], "judgement": run.judgement}
            cell["passed"] = run.judgement == "passed"
            cell["after_solution"] = cell["passed"] and run.solution_shown
    shown = solutions_shown(session, learner_ids)
    return {
        "exercises": exercises,
        "cells": cells,
        "solutions_shown": shown,
        "figures": exercise_figures(session, learner_ids, runs),
    }


def solutions_shown(session: Session, learner_ids: list[int]) -> dict[int, list[str]]:
    """Per learner, the exercises whose solution they were shown (by slug, sorted)."""
    shown: dict[int, list[str]] = {}
    if learner_ids:
        for learner_id, slug in session.exec(
            select(ExerciseHelp.learner_id, ExerciseHelp.exercise_slug)
            .where(
                col(ExerciseHelp.learner_id).in_(learner_ids),
                col(ExerciseHelp.solution_shown_at).is_not(None),
            )
            .order_by(col(ExerciseHelp.exercise_slug))
        ):
            shown.setdefault(learner_id, []).append(slug)
    return shown


def exercise_figures(
    session: Session, learner_ids: list[int], runs: list[tuple[Attempt, ExerciseRun]]
) -> list[ExerciseFigures]:
    """Per exercise someone tried (judged runs only: a run still going has no checks yet)."""
    hints: dict[tuple[int, str], int] = {}
    if learner_ids:
        for help_taken in session.exec(
            select(ExerciseHelp).where(col(ExerciseHelp.learner_id).in_(learner_ids))
        ):
            hints[(help_taken.learner_id, help_taken.exercise_slug)] = help_taken.hints_taken
    figures = []
    for exercise in all_exercises():
        tries: dict[int, int] = {}  # learner -> judged runs so far (frozen at the first pass)
        first_pass: dict[int, ExerciseRun] = {}
        failed: dict[str, set[int]] = {}
        titles: dict[str, str] = {}
        for attempt, run in runs:
            if run.exercise_slug != exercise.slug or run.judgement is None:
                continue
            learner = attempt.learner_id
            if learner not in first_pass:
                tries[learner] = tries.get(learner, 0) + 1
                if run.judgement == "passed":
                    first_pass[learner] = run
            for check in run.checks or []:
                if isinstance(check, dict) and check.get("status") == "fail":
                    key = str(check.get("key"))
                    failed.setdefault(key, set()).add(learner)
                    titles.setdefault(key, str(check.get("title") or key))
        if not tries:
            continue
        ranked = sorted(failed, key=lambda key: (-len(failed[key]), key))[:TOP_CHECKS]
        figures.append(
            ExerciseFigures(
                slug=exercise.slug,
                title=exercise.title,
                tried=len(tries),
                passed=len(first_pass),
                after_solution=sum(run.solution_shown for run in first_pass.values()),
                failed_checks=[FailedCheck(titles[key], len(failed[key])) for key in ranked],
                median_tries=median(tries[who] for who in first_pass) if first_pass else None,
                median_hints=median(hints.get((who, exercise.slug), 0) for who in tries),
            )
        )
    return figures
