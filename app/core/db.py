"""Engine factory with the SQLite pragmas this app relies on."""

from typing import Any

from sqlalchemy import Engine, event
from sqlmodel import create_engine


def make_engine(
    database_url: str, *, pool_size: int = 5, max_overflow: int = 10, pool_timeout_s: float = 30
) -> Engine:
    pool: dict[str, Any] = {
        "pool_size": pool_size,
        "max_overflow": max_overflow,
        "pool_timeout": pool_timeout_s,
    }
    if not database_url.startswith("sqlite"):
        return create_engine(database_url, pool_pre_ping=True, **pool)
    if database_url in ("sqlite://", "sqlite:///:memory:"):
        pool = {}  # one shared in-memory connection: there is no pool to size
    engine = create_engine(database_url, connect_args={"check_same_thread": False}, **pool)

    @event.listens_for(engine, "connect")
    def _sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        # WAL lets pages read while the writer thread stores metric points.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        # Every write waits for SQLite's one write lock. 5 s was too short for a burst on a
        # loaded machine (40 registrations at once answered 500, "database is locked"); handlers
        # wait in the thread pool, so a longer wait holds no other request up.
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.close()

    return engine
