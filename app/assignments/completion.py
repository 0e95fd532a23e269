"""When each learner finished each kind of item, by the definitions the cohort grids already use
(app/grading/progress.py, app/cases/results.py, app/exercises/views.py, app/practice/results.py):

- a drill is done while the drill grid reads "pending review" or "accepted" (the work is handed
  in; "changes requested" is not done), at the time of the newest submission;
- a case is done while the case grid reads "solved", at the time that attempt was revealed;
- an exercise is done once the exercise grid reads "passed", at the first passing run's end;
- N curve rounds are done at the time the N-th answered round was answered.
Nothing here refuses work after a due date: lateness is read from these times afterwards.
"""

from dataclasses import dataclass, field
from datetime import datetime

from sqlmodel import Session, col, func, select

from app.accounts.models import User
from app.assignments.items import Item, ItemKind
from app.cases.models import CaseAttempt
from app.cases.results import cohort_case_results
from app.exercises.cohort import cohort_exercises
from app.exercises.models import ExerciseRun
from app.grading.models import Submission
from app.grading.progress import DrillProgress, progress_grid
from app.models.time import as_utc
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt

HANDED_IN = {DrillProgress.pending, DrillProgress.accepted}


@dataclass
class Completions:
    """One learner's finished work: item -> when it was done, and their answered rounds' times."""

    done_at: dict[Item, datetime] = field(default_factory=dict)
    rounds_answered: list[datetime] = field(default_factory=list)

    def when(self, item: Item) -> datetime | None:
        if item.kind == ItemKind.rounds:
            count = int(item.key)
            answered = self.rounds_answered
            return answered[count - 1] if 0 < count <= len(answered) else None
        return self.done_at.get(item)


def completions(session: Session, learners: list[User]) -> dict[int, Completions]:
    ids = [learner.saved_id for learner in learners]
    found = {learner_id: Completions() for learner_id in ids}
    if not ids:
        return found
    _drills(session, ids, found)
    _cases(session, learners, found)
    _exercises(session, ids, found)
    rounds = session.exec(
        select(DiagnosisRound.learner_id, DiagnosisRound.answered_at)
        .where(
            col(DiagnosisRound.learner_id).in_(ids), col(DiagnosisRound.answered_at).is_not(None)
        )
        .order_by(col(DiagnosisRound.answered_at))
    ).all()
    for learner_id, answered_at in rounds:
        if answered_at is not None:
            found[learner_id].rounds_answered.append(as_utc(answered_at))
    return found


def _drills(session: Session, ids: list[int], found: dict[int, Completions]) -> None:
    grid = progress_grid(session, learner_ids=ids)
    newest: dict[tuple[int, str], datetime] = {}
    # Ascending versions, as the grid reads them: the newest submission is the one it shows.
    for learner_id, slug, created_at in session.exec(
        select(Submission.learner_id, Submission.drill_slug, Submission.created_at)
        .where(col(Submission.learner_id).in_(ids))
        .order_by(col(Submission.version))
    ):
        newest[(learner_id, slug)] = as_utc(created_at)
    for learner_id, statuses in grid.items():
        for slug, status in statuses.items():
            if status in HANDED_IN and (learner_id, slug) in newest:
                found[learner_id].done_at[Item(ItemKind.drill, slug)] = newest[(learner_id, slug)]


def _cases(session: Session, learners: list[User], found: dict[int, Completions]) -> None:
    cells = cohort_case_results(session, learners)["cells"]
    solved = {cell["id"]: key for key, cell in cells.items() if cell["state"] == "solved"}
    if not solved:
        return
    for attempt_id, revealed_at in session.exec(
        select(CaseAttempt.id, CaseAttempt.revealed_at).where(col(CaseAttempt.id).in_(solved))
    ):
        learner_id, case_key = solved[attempt_id]
        if revealed_at is not None:
            found[learner_id].done_at[Item(ItemKind.case, case_key)] = as_utc(revealed_at)


def _exercises(session: Session, ids: list[int], found: dict[int, Completions]) -> None:
    cells = cohort_exercises(session, ids)["cells"]
    passed = {key for key, cell in cells.items() if cell["passed"]}
    if not passed:
        return
    first_pass: dict[tuple[int, str], datetime] = {}
    for learner_id, slug, finished_at in session.exec(
        select(Attempt.learner_id, ExerciseRun.exercise_slug, func.min(Attempt.finished_at))
        .join(ExerciseRun, col(ExerciseRun.attempt_id) == col(Attempt.id))
        .where(col(Attempt.learner_id).in_(ids), ExerciseRun.judgement == "passed")
        .group_by(col(Attempt.learner_id), col(ExerciseRun.exercise_slug))
    ):
        if finished_at is not None:
            first_pass[(learner_id, slug)] = as_utc(finished_at)
    for learner_id, slug in passed:
        if (learner_id, slug) in first_pass:
            found[learner_id].done_at[Item(ItemKind.exercise, slug)] = first_pass[
                (learner_id, slug)
            ]
