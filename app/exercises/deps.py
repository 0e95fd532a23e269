"""What the exercise pages and API take from a request's path: the exercise, and a run its
viewer may read."""

from typing import Annotated

from fastapi import Depends, HTTPException

from app.runs.models import Attempt
from app.web.access import can_read_work_of
from app.web.deps import CurrentUser, RowId, SessionDep
from drills.exercises.contract import Exercise
from drills.exercises.registry import UnknownExercise, get_exercise


def exercise_from_path(slug: str) -> Exercise:
    try:
        return get_exercise(slug)
    except UnknownExercise:
        raise HTTPException(status_code=404, detail=f"No exercise {slug[:64]!r}.") from None


ExerciseDep = Annotated[Exercise, Depends(exercise_from_path)]


def readable_run(run_id: RowId, session: SessionDep, user: CurrentUser) -> Attempt:
    """An exercise run its viewer may read (theirs, or a learner's they review); anything else
    is answered exactly like a missing one."""
    attempt = session.get(Attempt, run_id)
    if (
        attempt is None
        or attempt.exercise_slug is None
        or not can_read_work_of(session, user, attempt.learner_id)
    ):
        raise HTTPException(status_code=404, detail=f"No exercise run {run_id}.")
    return attempt


RunDep = Annotated[Attempt, Depends(readable_run)]
