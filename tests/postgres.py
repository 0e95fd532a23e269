"""Throw-away PostgreSQL databases for tests.

The project's machines run PostgreSQL on 127.0.0.1:5432 with trust auth (CI too). Where none is
reachable the tests that need one are skipped with one clear line, except under CI=true, where
they fail: CI always runs them.
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import psycopg
import pytest

from support import postgres

SERVER = os.environ.get("DRILLBOOK_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/postgres")


def _skip_unless_ci(server: str, error: psycopg.OperationalError) -> NoReturn:
    if os.environ.get("CI") == "true":
        raise error
    pytest.skip(f"no PostgreSQL at {server} ({error.__class__.__name__}); CI runs these")


@contextmanager
def throwaway_database(template: str | None = None) -> Iterator[str]:
    """A new database, empty or a copy of `template` (a database name); yields its SQLAlchemy
    URL and drops it afterwards."""
    with postgres.throwaway_database(
        server=SERVER, prefix="drillbook_test", unreachable=_skip_unless_ci, template=template
    ) as url:
        yield url


def database_name(url: str) -> str:
    return url.rsplit("/", 1)[1]
