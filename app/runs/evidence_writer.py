"""The thread that stores what this web process hears of its runs' ends, and announces it.

It is the runner's event sink (`app.runner.events.EventSink`): a worker lost under a run, a task
that could not start, a replay's record, or (rarely) a final record its worker could not store.
Workers store everything else themselves (`app.runner.progress_store`). Verdicts arrive on
Dask's threads; one queue keeps slow database writes off Dask's event loop.
"""

import logging
import queue
import threading
from collections.abc import Callable

from sqlalchemy import Engine
from sqlalchemy.exc import DisconnectionError, InterfaceError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlmodel import Session

from app.runner.events import Ended, Finished, ReplayDone, RunEvent
from app.runs import evidence, lifecycle, replays
from app.runs.broker import AttemptEventBroker
from app.runs.models import AttemptStatus
from app.runs.replay_models import Replay

logger = logging.getLogger(__name__)


# Errors that say "not now" (a locked or unreachable database, an exhausted pool): the message is
# tried again, with growing pauses, until it is stored. Anything else is a fault of the message
# itself, and its attempt is ended `failed` with the reason, loudly.
TRANSIENT_ERRORS = (OperationalError, InterfaceError, DisconnectionError, PoolTimeout)
RETRY_PAUSES_S = (0.05, 0.2, 0.5, 1.0, 2.0, 5.0)

STORE_FAILED = "The server could not store this run's results ({error}); run it again."


class EvidenceWriter:
    def __init__(
        self,
        engine: Engine,
        broker: AttemptEventBroker,
        *,
        pause: Callable[[float], object] | None = None,
    ) -> None:
        # A connection pool of its own (see app.main), so busy request handlers never make the
        # only writer of run results wait for a connection.
        self._engine = engine
        self._broker = broker
        self._queue: queue.Queue[RunEvent | None] = queue.Queue()
        self._stopping = threading.Event()
        self._pause = pause or self._stopping.wait
        self._thread = threading.Thread(target=self._loop, name="evidence-writer", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def put(self, event: RunEvent) -> None:
        self._queue.put(event)

    def stop(self) -> None:
        """Write everything already queued, then end the thread. A message still failing to
        store after 30 s is left to the start-up reaper, which ends its attempt `failed`."""
        self._queue.put(None)
        self._thread.join(timeout=30)
        self._stopping.set()

    def _loop(self) -> None:
        while (message := self._queue.get()) is not None:
            self._store(message)

    def _store(self, message: RunEvent) -> None:
        """Store one message: retried while the database says "not now", never dropped."""
        tries = 0
        while True:
            try:
                self._apply(message)
                return
            except TRANSIENT_ERRORS as error:
                if self._stopping.is_set():
                    logger.error("server stopping: could not store %s: %s", _name(message), error)
                    return
                pause = RETRY_PAUSES_S[min(tries, len(RETRY_PAUSES_S) - 1)]
                tries += 1
                logger.warning(
                    "could not store %s (try %d, again in %.2f s): %s",
                    _name(message),
                    tries,
                    pause,
                    error,
                )
                self._pause(pause)
            except Exception as error:
                logger.exception("could not store %s; ending it failed", _name(message))
                self._end_failed(message, error)
                return

    def _end_failed(self, message: RunEvent, error: Exception) -> None:
        """The message itself cannot be stored: end its attempt (or replay) with the reason, so
        nothing is left `running` and the learner's page says what happened."""
        reason = STORE_FAILED.format(error=f"{type(error).__name__}: {error}"[:500])
        fallback: RunEvent = (
            ReplayDone(message.replay_id, None, reason)
            if isinstance(message, ReplayDone)
            else Ended(message.attempt_id, AttemptStatus.failed, reason)
        )
        try:
            self._apply(fallback)
        except Exception:
            logger.critical("could not even end %s as failed", _name(message), exc_info=True)

    def _apply(self, message: RunEvent) -> None:
        if isinstance(message, ReplayDone):
            self._store_replay(message)
            return
        with Session(self._engine) as session:
            attempt = evidence.lock_attempt(session, message.attempt_id)
            if attempt is None or attempt.final:
                return  # already ended (by its worker, a cancel or the housekeeping)
            never_started = attempt.status == AttemptStatus.queued
            if isinstance(message, Ended) and message.resend is not None and never_started:
                session.rollback()
                if self._resent(message):
                    return
                attempt = evidence.lock_attempt(session, message.attempt_id)
                if attempt is None or attempt.final:
                    return
            if isinstance(message, Finished):
                lifecycle.end_run(session, attempt, record=message.record)
            else:
                lifecycle.end_run(session, attempt, status=message.status, error=message.error)
            session.commit()
        self._broker.publish(message.attempt_id)

    def _resent(self, message: Ended) -> bool:
        """Send a run no worker started to the workers again; False if that failed too."""
        assert message.resend is not None
        try:
            message.resend()
        except Exception:
            logger.warning("could not send attempt %s again", message.attempt_id, exc_info=True)
            return False
        logger.info("attempt %s: its worker died before it started; sent again", message.attempt_id)
        return True

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


def _name(message: RunEvent) -> str:
    """Names a message in logs without its (possibly long) contents."""
    if isinstance(message, ReplayDone):
        return f"ReplayDone(replay {message.replay_id})"
    return f"{type(message).__name__}(attempt {message.attempt_id})"
