"""Throw-away PostgreSQL databases for tests.

The project's machines run PostgreSQL on 127.0.0.1:5432 with trust auth (CI too). Where none is
reachable the tests that need one are skipped with one clear line, except under CI=true, where
they fail: CI always runs them.
"""

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import psycopg
import pytest

SERVER = os.environ.get("DRILLBOOK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def _admin() -> psycopg.Connection[tuple[object, ...]]:
    try:
        return psycopg.connect(SERVER, autocommit=True, connect_timeout=3)
    except psycopg.OperationalError as error:
        if os.environ.get("CI") == "true":
            raise
        pytest.skip(f"no PostgreSQL at {SERVER} ({error.__class__.__name__}); CI runs these")


@contextmanager
def throwaway_database() -> Iterator[str]:
    """A new, empty database; yields its SQLAlchemy URL and drops it afterwards."""
    name = f"drillbook_test_{uuid.uuid4().hex[:12]}"
    with _admin() as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield (
            SERVER.rsplit("/", 1)[0].replace("postgresql://", "postgresql+psycopg://") + f"/{name}"
        )
    finally:
        with _admin() as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
