"""The schema comes from Alembic alone; a step down and back up keeps the rows that survive it."""

import sqlite3
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from fastapi.testclient import TestClient

from app.config import Settings
from app.main import create_app
from app.migrate import SchemaOutOfDate, alembic_config, downgrade, upgrade

TABLES = {
    "user",
    "attempt",
    "metric_point",
    "explanation",
    "cohort",
    "cohort_membership",
    "submission",
    "review",
    "replay",
    "login_session",
    "login_failure",
}


def tables(path: Path) -> set[str]:
    with sqlite3.connect(path) as db:
        rows = db.execute("select name from sqlite_master where type='table'").fetchall()
    return {name for (name,) in rows} - {"alembic_version"}


def test_upgrade_from_empty_creates_every_table_and_the_local_learner(tmp_path: Path) -> None:
    path = tmp_path / "fresh.sqlite3"
    upgrade(f"sqlite:///{path}")
    assert tables(path) == TABLES
    with sqlite3.connect(path) as db:
        # The skeleton's local learner survives as an account without a password.
        assert db.execute("select id, username, role, password_hash from user").fetchall() == [
            (1, "local-learner", "learner", None)
        ]


def test_models_and_migrations_agree(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'check.sqlite3'}"
    upgrade(url)
    # Raises if autogenerate would emit anything: a model changed without a migration.
    command.check(alembic_config(url))


def test_each_downgrade_and_upgrade_keeps_surviving_rows(tmp_path: Path) -> None:
    path = tmp_path / "roundtrip.sqlite3"
    url = f"sqlite:///{path}"
    upgrade(url)
    with sqlite3.connect(path) as db:
        db.execute(
            "insert into attempt (learner_id, drill_slug, drill_version, hypothesis,"
            " prediction_text, predicted_at, knobs, seed, command, status, created_at)"
            " values (1, 'overfit-one-batch', '1', 'fits', 'zero', '2026-01-01', '{}', 3,"
            " 'python -m drills run overfit-one-batch --seed 3', 'succeeded', '2026-01-01')"
        )
    script = ScriptDirectory.from_config(alembic_config(url))
    revisions = [rev.revision for rev in script.walk_revisions()]  # newest first
    for newer, older in zip(revisions, revisions[1:], strict=False):
        downgrade(url, older)
        upgrade(url, newer)
        with sqlite3.connect(path) as db:
            assert db.execute("select seed, status from attempt").fetchall() == [(3, "succeeded")]
            assert db.execute("select count(*) from user").fetchone() == (1,)
    assert len(revisions) >= 2
    downgrade(url, "base")
    assert tables(path) == set()
    upgrade(url)
    assert tables(path) == TABLES


def test_the_app_refuses_a_database_behind_the_migrations(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'old.sqlite3'}"
    upgrade(url, "0002")
    settings = Settings(environment="test", database_url=url, secret_key="k", data_dir=tmp_path)
    with pytest.raises(SchemaOutOfDate, match="python -m app migrate"):
        with TestClient(create_app(settings)):
            pass


def test_attempts_from_before_0008_predicted_no_number(tmp_path: Path) -> None:
    path = tmp_path / "numeric.sqlite3"
    url = f"sqlite:///{path}"
    upgrade(url, "0007")
    with sqlite3.connect(path) as db:
        db.execute(
            "insert into attempt (learner_id, drill_slug, drill_version, hypothesis,"
            " prediction_text, predicted_at, knobs, seed, command, status, created_at)"
            " values (1, 'overfit-one-batch', '1', 'fits', 'zero', '2026-01-01', '{}', 3,"
            " 'python -m drills run overfit-one-batch --seed 3', 'succeeded', '2026-01-01')"
        )
    upgrade(url)
    with sqlite3.connect(path) as db:
        row = db.execute("select numeric_predictions, numeric_matched from attempt").fetchone()
    assert row == ("{}", None)
