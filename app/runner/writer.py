"""The single thread that writes run progress to the database, then tells the SSE streams.

Progress arrives on Dask's threads; funnelling it through one queue keeps the web process the only
writer of run results and keeps slow disk writes off Dask's event loop.
"""

import logging
import queue
import threading
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session

from app import evidence, replays
from app.broker import AttemptEvent, AttemptEventBroker
from app.models import Attempt, AttemptStatus, Replay

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Started:
    attempt_id: int
    worker: str


@dataclass(frozen=True)
class Points:
    attempt_id: int
    points: list[evidence.Point]


@dataclass(frozen=True)
class Finished:
    attempt_id: int
    record: dict[str, Any]


@dataclass(frozen=True)
class Ended:
    """The attempt ends without a record from the worker (lost worker, watchdog, shutdown)."""

    attempt_id: int
    status: AttemptStatus
    error: str


@dataclass(frozen=True)
class ReplayDone:
    """A replay's record (None when its worker could not finish it, with the reason)."""

    replay_id: int
    record: dict[str, Any] | None
    error: str | None = None


Message = Started | Points | Finished | Ended | ReplayDone


class EvidenceWriter:
    def __init__(self, engine: Engine, broker: AttemptEventBroker) -> None:
        self._engine = engine
        self._broker = broker
        self._queue: queue.Queue[Message | None] = queue.Queue()
        self._thread = threading.Thread(target=self._loop, name="evidence-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, message: Message) -> None:
        self._queue.put(message)

    def stop(self) -> None:
        """Write everything already queued, then end the thread."""
        self._queue.put(None)
        self._thread.join(timeout=30)

    def _loop(self) -> None:
        while (message := self._queue.get()) is not None:
            try:
                self._apply(message)
            except Exception:  # one bad message must not stop the writer
                logger.exception("could not store %r", message)

    def _apply(self, message: Message) -> None:
        if isinstance(message, ReplayDone):
            self._store_replay(message)
            return
        with Session(self._engine) as session:
            attempt = session.get(Attempt, message.attempt_id)
            if attempt is None:
                return
            event = self._write(session, attempt, message)
            session.commit()
        if event is not None:
            self._broker.publish(event)

    def _store_replay(self, message: ReplayDone) -> None:
        with Session(self._engine) as session:
            replay = session.get(Replay, message.replay_id)
            if replay is None:
                return
            if message.record is None:
                replays.fail_replay(session, replay=replay, error=message.error or "lost")
            else:
                replays.finish_replay(session, replay=replay, record=message.record)
            session.commit()

    def _write(self, session: Session, attempt: Attempt, message: Message) -> AttemptEvent | None:
        match message:
            case Started(attempt_id, worker):
                if evidence.mark_running(session, attempt=attempt, worker=worker):
                    return AttemptEvent(attempt_id, "status", {"status": attempt.status})
            case Points(attempt_id, points):
                # Points that straggle in after the final record are already in it.
                if not attempt.final:
                    evidence.add_points(session, attempt=attempt, points=points)
                    return AttemptEvent(attempt_id, "points", {"points": points})
            case Finished(attempt_id, record):
                if not attempt.final:
                    evidence.finish_from_record(session, attempt=attempt, record=record)
                    return AttemptEvent(attempt_id, "done", {"status": attempt.status})
            case Ended(attempt_id, status, error):
                if evidence.end_without_record(
                    session, attempt=attempt, status=status, error=error
                ):
                    return AttemptEvent(attempt_id, "done", {"status": attempt.status})
        return None
