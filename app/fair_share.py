"""A learner's share of the workers: a cap on their unfinished runs, and runs handed out in turn.

The cap: at most `runs_per_learner` of a learner's runs (drill attempts, case runs, round runs)
queued or running at once; one more is refused with `TooManyRuns` (a 429) and nothing of it is
stored. It is counted in the database, so every web process shares it, under a lock of the
learner's row (app/row_locks.py) held to the commit: two presses at once cannot both take the
last place.

The turn: a run stored while its learner already had k unfinished runs gets turn k, and is sent
to the scheduler at priority -k. Dask starts higher priorities first and equal ones in the order
they came, so every learner's first waiting run goes before anyone's second: a run waits behind
at most one run of each other learner per turn, never behind one learner's whole backlog.
"""

from sqlalchemy import func
from sqlmodel import Session, col, select

from app.models import Attempt, AttemptStatus, User
from app.row_locks import lock_row

UNFINISHED = (AttemptStatus.queued, AttemptStatus.running)


class TooManyRuns(Exception):
    """The learner already has as many unfinished runs as one learner may."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        super().__init__(
            f"You already have {limit} runs queued or running, the most one learner may have at "
            "once (so that everyone's runs get a turn). Start this one when one of them ends."
        )


def take_turn(session: Session, *, learner_id: int, limit: int) -> int:
    """The turn of a run about to be stored for the learner, in the session's transaction
    (commit it with the run); raises TooManyRuns when the learner is at the cap."""
    lock_row(session, User, learner_id)
    unfinished = session.exec(
        select(func.count()).where(
            col(Attempt.learner_id) == learner_id, col(Attempt.status).in_(UNFINISHED)
        )
    ).one()
    if unfinished >= limit:
        raise TooManyRuns(limit)
    return int(unfinished)


def priority_of(turn: int) -> int:
    """The Dask priority of a run of this turn (higher starts first)."""
    return -turn
