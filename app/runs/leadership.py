"""One web process at a time does the housekeeping: whichever holds the leader lock.

PostgreSQL: a session advisory lock, held on a connection of its own for as long as the process
lives. If the process dies its connection closes and the lock is free at once; another process
takes it at its next try (each tries every second). SQLite (all web processes on one machine):
an exclusive `flock` on a file beside the database, released by the kernel when the holder dies.
"""

import fcntl
import logging
import os
from pathlib import Path
from typing import IO, Protocol

import psycopg
from sqlalchemy.engine import make_url

logger = logging.getLogger(__name__)

# Any fixed 64-bit number: the advisory lock's name, shared by every Drillbook web process.
ADVISORY_LOCK_KEY = 0x4452_494C_4C42_4F4B  # "DRILLBOK"


class Leadership(Protocol):
    def held(self) -> bool:
        """Hold the lock (taking it if free) and say whether this process has it."""

    def release(self) -> None: ...


class PostgresAdvisoryLock:
    def __init__(self, database_url: str) -> None:
        url = make_url(database_url).set(drivername="postgresql")
        self._conninfo = url.render_as_string(hide_password=False)
        self._connection: psycopg.Connection[tuple[object, ...]] | None = None
        self._held = False

    def held(self) -> bool:
        try:
            if self._connection is None:
                self._connection = psycopg.connect(
                    self._conninfo, autocommit=True, connect_timeout=5
                )
                self._held = False
            if self._held:
                self._connection.execute("SELECT 1")  # still connected, so still ours
            else:
                row = self._connection.execute(
                    "SELECT pg_try_advisory_lock(%s)", (ADVISORY_LOCK_KEY,)
                ).fetchone()
                self._held = bool(row and row[0])
                if self._held:
                    logger.info("this web process now does the housekeeping (pid %d)", os.getpid())
        except psycopg.Error as error:
            logger.warning("leader lock: %s", error)
            self.release()
        return self._held

    def release(self) -> None:
        held, self._held = self._held, False
        if self._connection is not None:
            try:
                if held:
                    # Closing the connection frees the lock too, but only once the server's
                    # backend has ended, a moment later: unlocking first hands it over at once.
                    self._connection.execute("SELECT pg_advisory_unlock(%s)", (ADVISORY_LOCK_KEY,))
                self._connection.close()  # the session's advisory locks go with it
            except psycopg.Error:
                pass
            self._connection = None


class FileLock:
    def __init__(self, path: Path | None) -> None:
        self._path = path  # None: an in-memory database, one process by nature
        self._file: IO[bytes] | None = None

    def held(self) -> bool:
        if self._path is None or self._file is not None:
            return True
        handle = open(self._path, "ab")  # noqa: SIM115 (kept open: the lock lives with it)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            return False
        self._file = handle
        return True

    def release(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


def leadership_for(database_url: str) -> Leadership:
    url = make_url(database_url)
    if url.get_backend_name() == "postgresql":
        return PostgresAdvisoryLock(database_url)
    database = url.database
    if not database or database == ":memory:":
        return FileLock(None)
    return FileLock(Path(database).with_name(Path(database).name + ".leader"))
