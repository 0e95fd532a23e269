"""A learner's share of the workers: a cap on their unfinished runs, runs handed out in turn, and
a backlog for the learner who has had more than their share of the workers lately.

The cap: at most `runs_per_learner` of a learner's runs (drill attempts, case runs, round runs,
exercise runs) queued or running at once; one more is refused with `TooManyRuns` (a 429) and
nothing of it is stored. It is counted in the database, so every web process shares it, under a
lock of the learner's row (app/core/row_locks.py) held to the commit: two presses at once cannot
both take the last place.

The turn: a run stored while its learner already had k unfinished runs gets turn k, and is sent
to the scheduler at priority -k. Dask starts higher priorities first and equal ones in the order
they came, so every learner's first waiting run goes before anyone's second.

The backlog: a run of turn 1 or more, or one whose learner has had more than their share of the
workers in the last `share_window_s`, is stored held (no scheduler yet) instead of being sent;
app/runs/backlog.py sends it once a worker is free and its learner is back within their share, or no
one else who ran lately is. The share is the workers' time in the window split evenly between
the learners who ran or waited in it. Runs cannot be paused once started: a learner who sends
long runs back to back would otherwise keep a worker for themselves the whole time, and every
other learner's runs would wait for the one worker left.
"""

from collections.abc import Collection
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, or_
from sqlmodel import Session, col, select

from app.accounts.models import User
from app.core.row_locks import lock_row
from app.models.time import as_utc, utcnow
from app.runner.dispatcher import AttemptRunner
from app.runs.models import Attempt, AttemptStatus

UNFINISHED = (AttemptStatus.queued, AttemptStatus.running)
# A learner's first run is held back once they have used this many shares (see held_at_start).
HELD_PAST_SHARES = 2.0


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


@dataclass(frozen=True)
class Shares:
    """Who ran or waited in the window, how many worker seconds each one's runs took in it, and
    how long each one's last finished run took (what their next run will likely take)."""

    window_s: float
    workers: int
    used_s: dict[int, float]  # every active learner, 0 for one who only waited
    last_s: dict[int, float] = field(default_factory=dict)

    @property
    def each_s(self) -> float:
        """One learner's share: the workers' time in the window over the active learners."""
        return self.window_s * self.workers / max(1, len(self.used_s))

    def within(self, learner_id: int, shares: float = 1.0) -> bool:
        """Whether the learner's use, with one more run as long as their last, stays within
        `shares` shares: a learner of long runs starts one only when they can afford it, not
        whenever they are a second under their share."""
        used = self.used_s.get(learner_id, 0.0) + self.last_s.get(learner_id, 0.0)
        return used < shares * self.each_s

    def may_go(self, learner_id: int, shares: float = 1.0) -> bool:
        """Used less than `shares` shares, or no other active learner is within theirs (then
        holding the run back would only leave a worker idle)."""
        return self.within(learner_id, shares) or not any(
            self.within(other) for other in self.used_s if other != learner_id
        )


def shares(
    session: Session,
    *,
    window_s: float,
    workers: int,
    now: datetime,
    learner_ids: Collection[int] = (),
) -> Shares:
    """The shares of the learners active in the last `window_s` (and of `learner_ids`)."""
    since = now - timedelta(seconds=window_s)
    active = set(
        session.exec(
            select(Attempt.learner_id)
            .where(or_(col(Attempt.created_at) >= since, col(Attempt.status).in_(UNFINISHED)))
            .distinct()
        ).all()
    )
    active.update(learner_ids)
    used = dict.fromkeys(active, 0.0)
    last: dict[int, tuple[datetime, float]] = {}
    runs = session.exec(
        select(Attempt.learner_id, Attempt.started_at, Attempt.finished_at).where(
            col(Attempt.learner_id).in_(active),
            col(Attempt.started_at).is_not(None),
            or_(col(Attempt.finished_at).is_(None), col(Attempt.finished_at) >= since),
        )
    ).all()
    for learner_id, started_at, finished_at in runs:
        if started_at is None:  # the query asked for started runs only
            continue
        started = as_utc(started_at)
        finished = as_utc(finished_at) if finished_at is not None else None
        end = min(finished or now, now)
        used[learner_id] += max(0.0, (end - max(started, since)).total_seconds())
        if finished is not None and (learner_id not in last or last[learner_id][0] < finished):
            last[learner_id] = (finished, max(0.0, (finished - started).total_seconds()))
    return Shares(
        window_s=window_s,
        workers=workers,
        used_s=used,
        last_s={learner_id: took for learner_id, (_, took) in last.items()},
    )


def held_at_start(
    session: Session, *, learner_id: int, turn: int, window_s: float, workers: int, now: datetime
) -> bool:
    """Whether a run about to be stored waits in the backlog instead of going to the workers.
    A first run is held only past twice its learner's share, and then waits until they are back
    within one: a class's learners, who each use about a share when the workers are busy, are
    not held back by the swing of their own runs, and a learner who sends long runs back to back
    gets little more than a share."""
    if turn > 0:
        return True
    return not shares(
        session, window_s=window_s, workers=workers, now=now, learner_ids=(learner_id,)
    ).may_go(learner_id, shares=HELD_PAST_SHARES)


def sent_to(session: Session, runner: AttemptRunner, *, learner_id: int, turn: int) -> str | None:
    """The scheduler a run about to be stored is sent to at once, or None: it is held back."""
    held = held_at_start(
        session,
        learner_id=learner_id,
        turn=turn,
        window_s=runner.share_window_s,
        workers=max(1, runner.live_workers),
        now=utcnow(),
    )
    return None if held else runner.scheduler_id
