"""Each web process's ear on the database: which attempts changed, for its live streams.

PostgreSQL: one dedicated connection per web process LISTENs on `attempt_changes.CHANNEL` (not a
pooled one: a LISTEN is lost when its connection goes back to a pool), in a thread of its own.
While nothing arrives it sends a query every few seconds, so a dropped connection is noticed;
it then reconnects, and wakes every stream, since changes may have been missed meanwhile.

SQLite: no NOTIFY. A thread looks every tenth of a second at the attempts this process's streams
watch (one query, only while some stream is open) and wakes those that changed.
"""

import logging
import threading
import time
from typing import Protocol

import psycopg
from sqlalchemy import Engine, bindparam, func, select
from sqlalchemy.engine import make_url
from sqlmodel import col

from app.runs.attempt_changes import CHANNEL, Change
from app.runs.broker import AttemptEventBroker
from app.runs.models import Attempt, MetricPoint

logger = logging.getLogger(__name__)

QUIET_PROBE_S = 5.0
# How long the listener waits for a notice before it looks whether it should stop: the most a
# web process's shutdown waits for it. A wake-up on an idle socket costs microseconds; at 0.5 s
# every stop of the app (each PostgreSQL test's teardown) waited ~0.45 s.
STOP_CHECK_S = 0.1
RECONNECT_PAUSES_S = (0.5, 1.0, 2.0, 5.0)
POLL_S = 0.1
APPLICATION_NAME = "drillbook-change-feed"


class ChangeFeed(Protocol):
    def start(self) -> None: ...
    def stop(self) -> None: ...


class PostgresListener:
    def __init__(self, database_url: str, broker: AttemptEventBroker) -> None:
        # psycopg's own URL: the SQLAlchemy one names the driver ("postgresql+psycopg://").
        url = make_url(database_url).set(
            drivername="postgresql",
            # Named, so an operator (or a test) finds it in pg_stat_activity.
            query={**make_url(database_url).query, "application_name": APPLICATION_NAME},
        )
        self._conninfo = url.render_as_string(hide_password=False)
        self._broker = broker
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="change-listener", daemon=True)
        self.connected = threading.Event()  # set while LISTENing (tests wait on it)
        self.connections = 0

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=STOP_CHECK_S + 5)

    def _run(self) -> None:
        tries = 0
        while not self._stopping.is_set():
            try:
                self._listen()
                tries = 0
            except psycopg.Error as error:
                self.connected.clear()
                pause = RECONNECT_PAUSES_S[min(tries, len(RECONNECT_PAUSES_S) - 1)]
                tries += 1
                logger.warning(
                    "change listener lost its connection (%s); again in %gs", error, pause
                )
                self._stopping.wait(pause)

    def _listen(self) -> None:
        with psycopg.connect(self._conninfo, autocommit=True, connect_timeout=10) as connection:
            connection.execute(f"LISTEN {CHANNEL}")
            if self.connections:  # a reconnection: changes may have gone by unheard
                self._broker.publish_all()
            self.connections += 1
            self.connected.set()
            quiet_since = time.monotonic()
            while not self._stopping.is_set():
                # Short waits, so stop() is quick; a query after each quiet interval.
                for notice in connection.notifies(timeout=STOP_CHECK_S):
                    quiet_since = time.monotonic()
                    try:
                        self._broker.publish(Change.parse(notice.payload).attempt_id)
                    except ValueError:
                        logger.warning("ignored a malformed change notice %r", notice.payload)
                if time.monotonic() - quiet_since > QUIET_PROBE_S:
                    connection.execute("SELECT 1")
                    quiet_since = time.monotonic()


# Each watched attempt's status and newest point: what changes when a worker stores anything.
_WATCHED_STATE = select(
    col(Attempt.id),
    col(Attempt.status),
    select(func.max(col(MetricPoint.id)))
    .where(col(MetricPoint.attempt_id) == col(Attempt.id))
    .scalar_subquery(),
).where(col(Attempt.id).in_(bindparam("watched", expanding=True)))


class SqlitePoller:
    def __init__(self, engine: Engine, broker: AttemptEventBroker) -> None:
        self._engine = engine
        self._broker = broker
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._run, name="change-poller", daemon=True)
        self._seen: dict[int, tuple[str, int]] = {}

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join(timeout=5)

    def _run(self) -> None:
        while not self._stopping.wait(POLL_S):
            try:
                self.poll()
            except Exception:  # a locked or busy database: the next look will do
                logger.warning("change poller could not read the attempts", exc_info=True)

    def poll(self) -> None:
        watched = self._broker.watched()
        self._seen = {key: value for key, value in self._seen.items() if key in watched}
        if not watched:
            return
        with self._engine.connect() as connection:
            rows = connection.execute(_WATCHED_STATE, {"watched": list(watched)}).all()
        for attempt_id, status, point in rows:
            assert attempt_id is not None
            state = (status, int(point or 0))
            if self._seen.get(attempt_id) != state:
                self._seen[attempt_id] = state
                self._broker.publish(attempt_id)


def change_feed_for(database_url: str, engine: Engine, broker: AttemptEventBroker) -> ChangeFeed:
    if make_url(database_url).get_backend_name() == "postgresql":
        return PostgresListener(database_url, broker)
    return SqlitePoller(engine, broker)
