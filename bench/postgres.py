"""A throw-away PostgreSQL database for the scale-out benchmark, and what it holds per attempt.

Like tests/postgres.py (the same server: 127.0.0.1:5432, trust auth), but a benchmark without a
server stops with one clear line instead of skipping.
"""

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg

SERVER = os.environ.get("DRILLBOOK_BENCH_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def _admin() -> psycopg.Connection[tuple[Any, ...]]:
    try:
        return psycopg.connect(SERVER, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as error:
        raise SystemExit(
            f"the scale-out set-up needs PostgreSQL at {SERVER} (DRILLBOOK_BENCH_POSTGRES): {error}"
        ) from None


@contextmanager
def throwaway_database() -> Iterator[str]:
    """A new, empty database; yields its SQLAlchemy URL and drops it afterwards."""
    name = f"drillbook_bench_{uuid.uuid4().hex[:12]}"
    with _admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield (
            SERVER.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + f"/{name}"
        )
    finally:
        with _admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
