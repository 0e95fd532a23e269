"""Sending the runs that were held back (app/runs/fair_share.py) once a worker is free for them.

A held run is stored queued with no scheduler. The leader's housekeeping calls `release` several
times a second: while fewer runs are sent and unfinished than the scheduler has workers, it sends
held runs, each learner's in turn order, the learner who used the workers least lately first, and
only those whose learner may go now (within their share, or no one else active is). A run is
claimed by a conditional update before it is sent, so a run cancelled meanwhile, or claimed by a
leader that took over, is not sent twice.
"""

from datetime import datetime
from typing import Any, cast

from sqlalchemy import CursorResult, func, update
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.exercises.models import ExerciseRun
from app.runner.dispatcher import AttemptRunner
from app.runs.attempts import dispatch, not_dispatched
from app.runs.fair_share import UNFINISHED, priority_of, shares
from app.runs.models import Attempt, AttemptStatus


def held_runs(session: Session) -> list[Attempt]:
    """Every held run, in the order each learner's go: by turn, then as stored."""
    return list(
        session.exec(
            select(Attempt)
            .where(Attempt.status == AttemptStatus.queued, col(Attempt.scheduler_id).is_(None))
            .order_by(col(Attempt.queue_turn), col(Attempt.id))
        ).all()
    )


def next_to_send(
    session: Session, *, settings: Settings, workers: int, scheduler_id: str, now: datetime
) -> list[Attempt]:
    """The held runs to send now (at most one per learner), fewest worker seconds used first."""
    sent = session.exec(
        select(func.count()).where(
            col(Attempt.status).in_(UNFINISHED), Attempt.scheduler_id == scheduler_id
        )
    ).one()
    free = workers - int(sent)
    if free <= 0:
        return []
    first: dict[int, Attempt] = {}
    for run in held_runs(session):
        first.setdefault(run.learner_id, run)
    if not first:
        return []
    share = shares(
        session, window_s=settings.share_window_s, workers=workers, now=now, learner_ids=first
    )
    ready = [run for learner, run in first.items() if share.may_go(learner)]
    ready.sort(key=lambda run: (share.used_s.get(run.learner_id, 0.0), run.queue_turn, run.id))
    return ready[:free]


def release(
    session: Session, runner: AttemptRunner, settings: Settings, now: datetime
) -> list[int]:
    """Send what may go now; returns the ids sent."""
    scheduler_id = runner.scheduler_id
    chosen = next_to_send(
        session,
        settings=settings,
        workers=runner.live_workers,
        scheduler_id=scheduler_id,
        now=now,
    )
    sent = []
    for run in chosen:
        assert run.id is not None
        claimed = cast(
            CursorResult[Any],
            session.execute(
                update(Attempt)
                .where(
                    col(Attempt.id) == run.id,
                    col(Attempt.status) == AttemptStatus.queued,
                    col(Attempt.scheduler_id).is_(None),
                )
                .values(scheduler_id=scheduler_id)
            ),
        ).rowcount
        session.commit()
        if not claimed:
            continue  # cancelled meanwhile
        session.refresh(run)
        send(session, runner, run)
        sent.append(run.id)
    return sent


def send(session: Session, runner: AttemptRunner, run: Attempt) -> None:
    """Send a claimed run: a drill's run, or an exercise's judging of the code it stored."""
    if run.exercise_slug is None:
        dispatch(session, runner, run)
        return
    assert run.id is not None
    code = session.exec(select(ExerciseRun.code).where(ExerciseRun.attempt_id == run.id)).one()
    try:
        runner.submit_exercise(
            attempt_id=run.id,
            exercise=run.exercise_slug,
            code=code,
            seed=run.seed,
            priority=priority_of(run.queue_turn),
        )
    except Exception as error:
        not_dispatched(session, run, error)
