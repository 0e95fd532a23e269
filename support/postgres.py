"""Throw-away PostgreSQL databases, for the scale-out benchmark and (tests/postgres.py) the tests.

The project's machines run PostgreSQL on 127.0.0.1:5432 with trust auth. A benchmark without a
server stops with one clear line; the tests decide for themselves (they skip, or fail in CI).
"""

import os
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

import psycopg

SERVER = os.environ.get("DRILLBOOK_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def _stop(server: str, error: psycopg.OperationalError) -> NoReturn:
    raise SystemExit(
        f"the scale-out set-up needs PostgreSQL at {server} (DRILLBOOK_BENCH_POSTGRES): {error}"
    ) from None


@contextmanager
def throwaway_database(
    *,
    server: str = SERVER,
    prefix: str = "drillbook_bench",
    unreachable: Callable[[str, psycopg.OperationalError], NoReturn] = _stop,
    template: str | None = None,
) -> Iterator[str]:
    """A new database on `server`, empty or a copy of the database named `template` (which
    nobody may be connected to); yields its SQLAlchemy URL and drops it afterwards.
    `unreachable` is called when the server does not answer."""

    def admin() -> psycopg.Connection[tuple[Any, ...]]:
        try:
            return psycopg.connect(server, autocommit=True, connect_timeout=3)
        except psycopg.OperationalError as error:
            unreachable(server, error)

    name = f"{prefix}_{uuid.uuid4().hex[:12]}"
    with admin() as connection:
        copy = f' TEMPLATE "{template}"' if template else ""
        connection.execute(f'CREATE DATABASE "{name}"{copy}')
    try:
        yield (
            server.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + f"/{name}"
        )
    finally:
        with admin() as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
