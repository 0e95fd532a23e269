"""Ending the attempts nobody else will end, from what the database and the scheduler say.

Every web process runs this loop; only the leader (`app.runs.leadership`) acts, so each ending is
given once however many processes serve. The leader also sends the runs held back for fairness
(`app.runs.backlog`), several times a second. It needs no memory of who sent what: an unfinished
attempt is judged by its row (its scheduler, its worker's heartbeat, its times) and the pool.
The same rules end, at start-up, what an earlier cluster left unfinished.
"""

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import Engine
from sqlmodel import Session, col, select

from app.core.config import Settings
from app.models.time import as_utc, utcnow
from app.runner.dispatcher import WORKER_LOST, AttemptRunner
from app.runs import lifecycle, replays
from app.runs.backlog import release
from app.runs.leadership import Leadership
from app.runs.models import Attempt, AttemptStatus
from app.runs.replay_models import Replay, ReplayStatus

logger = logging.getLogger(__name__)

SWEEP_EVERY_S = 1.0
# A held run goes as soon as a worker is free for it: the wait is at most this much longer.
RELEASE_EVERY_S = 0.25

CLUSTER_RESTARTED = (
    "The workers were restarted while this attempt was queued or running (the server with its "
    "embedded workers, or the cluster), so its run was lost. Run it again."
)
REPLAY_LOST = "No worker reported this replay's result; the server that sent it has stopped."


@dataclass(frozen=True)
class Ending:
    status: AttemptStatus
    reason: str
    restart_worker: str | None = None  # the worker to replace (stuck inside one op)


def ending_for(
    attempt: Attempt,
    *,
    now: datetime,
    scheduler_id: str | None,
    no_worker_for_s: float,
    settings: Settings,
) -> Ending | None:
    """How an unfinished attempt ends now, or None while it may still finish by itself."""
    # A held run was sent nowhere yet: no restart lost it; it goes to whichever scheduler is up.
    if scheduler_id is not None and not attempt.held and attempt.scheduler_id != scheduler_id:
        return Ending(AttemptStatus.failed, CLUSTER_RESTARTED)
    created = as_utc(attempt.created_at)
    if attempt.status == AttemptStatus.running:
        started = as_utc(attempt.started_at) if attempt.started_at is not None else created
        limit = settings.time_limit_s
        if now - started > timedelta(seconds=limit + settings.watchdog_grace_s):
            return Ending(
                AttemptStatus.timed_out,
                f"Stopped by the watchdog: the run kept going past its {limit:g} s time limit.",
                restart_worker=attempt.worker,
            )
        beat = as_utc(attempt.heartbeat_at) if attempt.heartbeat_at is not None else started
        if now - beat > timedelta(seconds=settings.heartbeat_timeout_s):
            if attempt.cancel_requested_at is not None:
                return Ending(AttemptStatus.cancelled, "Cancelled; its worker stopped answering.")
            return Ending(AttemptStatus.failed, WORKER_LOST)
        return None
    grace = settings.no_worker_grace_s
    if no_worker_for_s > grace:
        return Ending(
            AttemptStatus.failed,
            f"No worker has been available for over {grace:g} s, so nothing could run this "
            "attempt; is the cluster running any workers?",
        )
    queue_limit = settings.queue_timeout_s
    if now - created > timedelta(seconds=queue_limit) and attempt.held:
        return Ending(
            AttemptStatus.failed,
            f"No worker started this run within {queue_limit:g} s: it was held back while other "
            "runs went first (its learner's earlier runs, or other learners' while its learner "
            "had had more than their share of the workers).",
        )
    if now - created > timedelta(seconds=queue_limit):
        return Ending(
            AttemptStatus.failed,
            f"No worker started this run within {queue_limit:g} s; the pool was busy the whole "
            "time.",
        )
    return None


class Housekeeping:
    def __init__(
        self,
        engine: Engine,
        runner: AttemptRunner,
        settings: Settings,
        leadership: Leadership,
        *,
        on_ended: Callable[[int], None] = lambda _: None,
    ) -> None:
        self._engine = engine
        self._runner = runner
        self._settings = settings
        self._leadership = leadership
        self._on_ended = on_ended  # tells this process's own streams at once
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="housekeeping", daemon=True)

    def start(self) -> None:
        """One sweep now (what an earlier cluster left unfinished ends before the first page is
        served), then one a second, and held runs sent four times a second."""
        self._sweep_if_leader()
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        self._leadership.release()

    def _loop(self) -> None:
        swept = time.monotonic()
        while not self._stopping.wait(RELEASE_EVERY_S):
            if time.monotonic() - swept >= SWEEP_EVERY_S:
                swept = time.monotonic()
                self._sweep_if_leader()
            self._release_if_leader()

    def _sweep_if_leader(self) -> None:
        try:
            if self._leadership.held():
                self.sweep()
        except Exception:  # the housekeeping must go on whatever one sweep met
            logger.exception("housekeeping sweep failed")

    def _release_if_leader(self) -> None:
        try:
            if self._leadership.held():
                self.release()
        except Exception:  # a held run is tried again at the next tick
            logger.exception("sending held runs failed")

    def release(self) -> list[int]:
        """Send the held runs that may go now (app/runs/backlog.py); returns their ids."""
        with Session(self._engine) as session:
            return release(session, self._runner, self._settings, utcnow())

    def sweep(self) -> list[int]:
        """End every attempt whose ending is in; returns their ids."""
        try:
            scheduler_id: str | None = self._runner.scheduler_id
        except Exception:  # no scheduler reachable: end nothing by it
            scheduler_id = None
        now, no_worker_for_s = utcnow(), self._runner.no_worker_for()
        with Session(self._engine) as session:
            unfinished = session.exec(
                select(Attempt).where(
                    col(Attempt.status).in_([AttemptStatus.queued, AttemptStatus.running])
                )
            ).all()
            verdicts = {
                attempt.id: ending
                for attempt in unfinished
                if attempt.id is not None
                and (
                    ending := ending_for(
                        attempt,
                        now=now,
                        scheduler_id=scheduler_id,
                        no_worker_for_s=no_worker_for_s,
                        settings=self._settings,
                    )
                )
            }
        ended = [attempt_id for attempt_id, v in verdicts.items() if self._end(attempt_id, v)]
        self._end_lost_replays(now)
        return ended

    def _end(self, attempt_id: int, ending: Ending) -> bool:
        with Session(self._engine) as session:
            attempt = lifecycle.lock_unended(session, attempt_id)
            if attempt is None:
                return False  # it finished meanwhile
            lifecycle.end_run(session, attempt, status=ending.status, error=ending.reason)
            session.commit()
        logger.warning("attempt %s ended %s: %s", attempt_id, ending.status, ending.reason)
        if ending.restart_worker:
            self._runner.restart_worker(ending.restart_worker)
        self._on_ended(attempt_id)
        return True

    def _end_lost_replays(self, now: datetime) -> None:
        """A replay's result comes back through the web process that sent it; one still queued
        after the longest a replay can take was lost with that process."""
        longest = timedelta(
            seconds=self._settings.queue_timeout_s
            + self._settings.time_limit_s
            + self._settings.watchdog_grace_s
            + 60
        )
        with Session(self._engine) as session:
            queued = session.exec(select(Replay).where(Replay.status == ReplayStatus.queued)).all()
            for replay in queued:
                if now - as_utc(replay.created_at) > longest:
                    replays.fail_replay(session, replay=replay, error=REPLAY_LOST)
            session.commit()
