"""The database and what SQLite keeps beside it are readable by the server's user alone (0600),
in a data directory of its own (0700), whatever the umask, for a new install and an old one."""

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import LocalCluster
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.core.migrate import upgrade
from app.main import create_app
from tests.app.factories import add_user, engine_of
from tests.conftest import ClusterCredentials


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0o022)  # files 0644, folders 0755 unless the app says otherwise
    yield
    os.umask(previous)


@pytest.fixture
def migrated(
    tmp_path: Path, open_umask: None, cluster: LocalCluster, cluster_credentials: ClusterCredentials
) -> tuple[Settings, Path]:
    """A fresh install's settings (its database in a folder of its own), migrated as
    `python -m app migrate` does, and the database file."""
    database = tmp_path / "db" / "drillbook.sqlite3"
    settings = Settings(
        environment="test",
        database_url=f"sqlite:///{database}",
        data_dir=tmp_path / "var",
        secret_key="test-only-key",
        scheduler_address=cluster.scheduler_address,
        **cluster_credentials,
    )
    upgrade(settings.database_url)
    return settings, database


def test_a_new_install_keeps_the_database_and_its_log_private(
    migrated: tuple[Settings, Path],
) -> None:
    settings, database = migrated
    assert mode(database) == 0o600 and mode(database.parent) == 0o700
    with TestClient(create_app(settings)) as client:
        add_user(engine_of(client), "lee")  # a write: SQLite opens its -wal and -shm files
        for suffix in ("", "-wal", "-shm"):
            path = database.with_name(database.name + suffix)
            assert path.exists() and mode(path) == 0o600, (suffix, oct(mode(path)))
        assert mode(settings.data_dir) == 0o700
        assert all(mode(path) == 0o600 for path in settings.data_dir.iterdir() if path.is_file())


def test_an_old_install_is_narrowed_when_the_server_starts(
    migrated: tuple[Settings, Path],
) -> None:
    settings, database = migrated
    wal = database.with_name(database.name + "-wal")
    wal.touch()
    for path in (database, wal):
        path.chmod(0o644)
    settings.data_dir.mkdir()
    settings.data_dir.chmod(0o755)
    create_app(settings)
    assert (mode(database), mode(wal), mode(settings.data_dir)) == (0o600, 0o600, 0o700)
