"""What a worker writes to the database while it runs an attempt, each write announced.

The worker stores its own run: the claim (queued → running), each batch of points, a heartbeat
every second, and the final record. So a run needs no web process after it is sent: it finishes,
is stored exactly once and shows in every web process even if the one that sent it died.
Every write is conditional on the attempt still being unfinished, so a run and whoever ends it
from outside (the learner's cancel, the housekeeping) never both decide its fate.
"""

import logging
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TypeVar

from sqlalchemy import CursorResult, Engine, update
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlmodel import Session, col, select

from app import features
from app.core.db import make_engine
from app.models.time import utcnow
from app.runner.events import Point
from app.runs import evidence, lifecycle
from app.runs.attempt_changes import Change, announce
from app.runs.models import Attempt, AttemptStatus

logger = logging.getLogger(__name__)

HEARTBEAT_S = 1.0
# "Not now" from the database (locked SQLite file, restarting PostgreSQL): tried again with these
# pauses. The final record gets the longest patience; points give up sooner, since the record
# carries every point again.
TRANSIENT = (OperationalError, InterfaceError, DisconnectionError)
RECORD_PAUSES_S = (0.05, 0.2, 0.5, 1, 2, 5, 5, 5, 10)
POINT_PAUSES_S = (0.05, 0.2, 0.5)

UNFINISHED = (AttemptStatus.queued, AttemptStatus.running)

T = TypeVar("T")

_engines: dict[str, Engine] = {}
_engines_lock = threading.Lock()


def engine_for(database_url: str) -> Engine:
    """One small pool per database per worker process (tests use many databases: keep four)."""
    with _engines_lock:
        engine = _engines.get(database_url)
        if engine is None:
            if len(_engines) >= 4:
                _engines.pop(next(iter(_engines))).dispose()
            engine = _engines[database_url] = make_engine(database_url, pool_size=2)
        return engine


def retrying(pauses: tuple[float, ...], write: Callable[[], T]) -> T:
    for pause in (*pauses, None):
        try:
            return write()
        except TRANSIENT as error:
            if pause is None:
                raise
            logger.warning("database busy (%s); again in %gs", error, pause)
            time.sleep(pause)
    raise AssertionError("unreachable")


class ProgressStore:
    def __init__(self, database_url: str, attempt_id: int) -> None:
        self._engine = engine_for(database_url)
        self._attempt_id = attempt_id
        features.install()  # a worker ends its own runs: the features' hooks come with it
        self.cancel_requested = threading.Event()

    def claim(self, worker: str) -> bool:
        """queued → running on this worker; False when the attempt ended before it started
        (cancelled, or given up on by the queue timeout): then nothing must run."""

        def write() -> bool:
            now = utcnow()
            with Session(self._engine) as session:
                result: CursorResult[Any] = session.execute(  # type: ignore[assignment]
                    update(Attempt)
                    .where(col(Attempt.id) == self._attempt_id)
                    .where(col(Attempt.status) == AttemptStatus.queued)
                    .values(
                        status=AttemptStatus.running,
                        started_at=now,
                        heartbeat_at=now,
                        worker=worker,
                    )
                )
                claimed = result.rowcount
                if claimed:
                    announce(session, Change(self._attempt_id, 0))
                session.commit()
            return bool(claimed)

        return retrying(RECORD_PAUSES_S, write)

    def add_points(self, points: Sequence[Point]) -> None:
        """Store one batch as it streams in. A batch that cannot be stored is left to the final
        record, which carries every point."""

        def write() -> None:
            with Session(self._engine) as session:
                status, asked = session.exec(
                    select(Attempt.status, Attempt.cancel_requested_at).where(
                        Attempt.id == self._attempt_id
                    )
                ).one()
                if asked is not None:  # seen here first when points come faster than beats
                    self.cancel_requested.set()
                if status not in UNFINISHED:
                    return  # ended from outside (watchdog, lost-worker verdict): keep it as it is
                seq = evidence.insert_points(session, attempt_id=self._attempt_id, points=points)
                announce(session, Change(self._attempt_id, seq))
                session.commit()

        try:
            retrying(POINT_PAUSES_S, write)
        except Exception:
            logger.exception("attempt %s: could not store a batch of points", self._attempt_id)

    def beat(self) -> None:
        """Say the run is alive; learn whether its learner asked to cancel it."""
        with Session(self._engine) as session:
            session.execute(
                update(Attempt)
                .where(col(Attempt.id) == self._attempt_id)
                .values(heartbeat_at=utcnow())
            )
            asked = session.exec(
                select(Attempt.cancel_requested_at).where(Attempt.id == self._attempt_id)
            ).one()
            session.commit()
        if asked is not None:
            self.cancel_requested.set()

    @contextmanager
    def heartbeat(self) -> Iterator[None]:
        """Beat every second in a thread of its own while the run goes on (a training step that
        holds the interpreter delays a beat by a step, never stops it)."""
        done = threading.Event()

        def beat_until_done() -> None:
            while not done.wait(HEARTBEAT_S):
                try:
                    self.beat()
                except Exception:  # a missed beat is not a lost run; several in a row are
                    logger.warning(
                        "attempt %s: heartbeat not stored", self._attempt_id, exc_info=True
                    )

        thread = threading.Thread(target=beat_until_done, name="attempt-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join(timeout=5)

    def finish(self, record: dict[str, Any]) -> bool:
        """Store the final record (True), unless the attempt was already ended from outside."""

        def write() -> bool:
            with Session(self._engine) as session:
                attempt = lifecycle.lock_unended(session, self._attempt_id)
                if attempt is None:
                    return False
                lifecycle.end_run(session, attempt, record=record)
                session.commit()
                return True

        return retrying(RECORD_PAUSES_S, write)
