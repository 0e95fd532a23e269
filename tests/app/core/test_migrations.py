"""The schema comes from Alembic alone; a step down and back up keeps the rows that survive it."""

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from fastapi.testclient import TestClient
from sqlalchemy import Engine, inspect, text
from sqlalchemy.exc import IntegrityError, StatementError
from sqlmodel import Session, SQLModel

from app.accounts.models import LOCAL_LEARNER_ID
from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import SchemaOutOfDate, alembic_config, downgrade, upgrade
from app.main import create_app
from app.runs.models import Attempt
from tests.postgres import throwaway_database

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
    "case_attempt",
    "case_run",
    "case_review",
    "review_card",
    "review_log",
    "cohort_review_item",
    "diagnosis_round",
    "round_review",
    "exercise_run",
    "exercise_help",
    "saved_comment",
    "practice_settings",
    "assignment",
    "diagnosis_revision",
    "exercise_help_step",
    "exercise_run_comment",
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


def test_case_attempts_from_before_0018_keep_the_cause_their_case_had(tmp_path: Path) -> None:
    """Before 0018 a case's key fixed its cause; the upgrade writes that cause on each
    attempt (and an empty one for a key no pool had), so old attempts still score and reveal."""
    path = tmp_path / "cases.sqlite3"
    url = f"sqlite:///{path}"
    upgrade(url, "0017")
    with sqlite3.connect(path) as db:
        for number, key in enumerate(("frozen-features", "nan-on-one-batch", "no-such-case"), 1):
            db.execute(
                "insert into case_attempt (learner_id, case_key, number, seed, knobs, budget,"
                " stage, created_at) values (1, ?, ?, 7, '{}', 3, 'revealed', '2026-01-01')",
                (key, number),
            )
    upgrade(url, "0018")
    with sqlite3.connect(path) as db:
        rows = db.execute("select case_key, cause from case_attempt order by number").fetchall()
    assert rows == [
        ("frozen-features", "backbone-not-optimized"),
        ("nan-on-one-batch", "empty-batch-division"),
        ("no-such-case", ""),
    ]


@pytest.fixture(params=["sqlite", "postgresql"])
def empty_database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """An empty database on each backend (PostgreSQL: a throw-away one, or a one-line skip)."""
    if request.param == "postgresql":
        with throwaway_database() as url:
            yield url
        return
    yield f"sqlite:///{tmp_path / 'empty.sqlite3'}"


@contextmanager
def engine_for(url: str) -> Iterator[Engine]:
    engine = make_engine(url)
    try:
        yield engine
    finally:
        engine.dispose()


# (kind, name): a name is a string or None (a model's constraint may also hold SQLAlchemy's
# deferred-name marker, so the name is typed as any object).
Names = set[tuple[str, object]]


def names_in_database(engine: Engine, table: str) -> Names:
    """(kind, name) of the table's primary key, foreign keys, unique constraints and indexes, as
    the database reports them (an unnamed SQLite constraint has the name None)."""
    found = inspect(engine)
    names: Names = {("pk", found.get_pk_constraint(table)["name"])}
    names |= {("fk", fk["name"]) for fk in found.get_foreign_keys(table)}
    names |= {("uq", uq["name"]) for uq in found.get_unique_constraints(table)}
    # PostgreSQL also lists the index behind each unique constraint; it is the constraint.
    names |= {
        ("ix", ix["name"]) for ix in found.get_indexes(table) if "duplicates_constraint" not in ix
    }
    return names


def names_in_models(table: str) -> Names:
    kinds = {"PrimaryKeyConstraint": "pk", "ForeignKeyConstraint": "fk", "UniqueConstraint": "uq"}
    model = SQLModel.metadata.tables[table]
    # A CHECK constraint is named by the convention too, but neither backend's reflection is
    # compared here (names_in_database lists none); test_0022 checks diagnosis_revision's own.
    names: Names = {
        (kinds[type(c).__name__], c.name) for c in model.constraints if type(c).__name__ in kinds
    }
    return names | {("ix", index.name) for index in model.indexes}


def test_the_naming_convention_names_every_constraint_of_the_models() -> None:
    assert names_in_models("attempt") == {
        ("pk", "pk_attempt"),
        ("fk", "fk_attempt_learner_id_user"),
        ("ix", "ix_attempt_learner_id"),
        ("ix", "ix_attempt_drill_slug"),
        ("ix", "ix_attempt_status"),
        ("fk", "fk_attempt_case_attempt_id_case_attempt"),
        ("ix", "ix_attempt_case_attempt_id"),
        ("fk", "fk_attempt_round_id_diagnosis_round"),
        ("ix", "ix_attempt_round_id"),
        ("ix", "ix_attempt_exercise_slug"),
        ("ix", "ix_attempt_created_at"),  # who ran lately (app/runs/fair_share.py)
        ("uq", "uq_attempt_learner_id"),  # (learner_id, request_key): one run per request key
    }
    for table in TABLES:
        assert None not in {name for _, name in names_in_models(table)}, table


def test_0011_names_old_constraints_by_the_convention_and_back(empty_database: str) -> None:
    """Down to 0010 gives the names every database made before the convention had (SQLite:
    unnamed keys; PostgreSQL: its own `_pkey` / `_fkey`); up again, the models' names, and
    autogenerate sees nothing to do."""
    url = empty_database
    upgrade(url)
    downgrade(url, "0010")
    with engine_for(url) as engine:
        old = {name for kind, name in names_in_database(engine, "submission") if kind != "ix"}
        if engine.dialect.name == "sqlite":
            assert old == {None, "uq_submission_version"}
        else:
            assert old == {
                "submission_pkey",
                "submission_learner_id_fkey",
                "submission_failed_attempt_id_fkey",
                "submission_fixed_attempt_id_fkey",
                "uq_submission_version",
            }
        upgrade(url)
        for table in TABLES:
            assert names_in_database(engine, table) == names_in_models(table), table
    command.check(alembic_config(url))  # raises if a model and the database disagree


def test_a_stored_datetime_reads_back_aware_in_utc(empty_database: str) -> None:
    upgrade(empty_database)
    beat = datetime(2026, 12, 3, 12, 30, 15, 250000, tzinfo=timezone(timedelta(hours=2)))
    with engine_for(empty_database) as engine:
        with Session(engine) as session:
            attempt = Attempt(
                learner_id=LOCAL_LEARNER_ID,
                drill_slug="overfit-one-batch",
                drill_version="1",
                hypothesis="fits",
                prediction_text="zero",
                seed=3,
                command="python -m drills run overfit-one-batch --seed 3",
                heartbeat_at=beat,
            )
            session.add(attempt)
            session.commit()
            attempt_id = attempt.id
        with Session(engine) as session:
            stored = session.get(Attempt, attempt_id)
            assert stored is not None and stored.heartbeat_at is not None
            assert stored.heartbeat_at == beat  # the same instant
            assert stored.heartbeat_at.tzinfo is UTC
            assert stored.heartbeat_at.hour == 10  # read in UTC, not in the zone written in
            assert stored.created_at.tzinfo is UTC
            # A naive datetime says nothing of its zone: refused rather than guessed.
            stored.cancel_requested_at = datetime(2026, 12, 3, 12, 30)
            session.add(stored)
            with pytest.raises(StatementError, match="timezone"):
                session.commit()


def test_0022_keeps_a_saved_comment_once_per_owner_and_one_setting_per_learner(
    tmp_path: Path,
) -> None:
    path = tmp_path / "0022.sqlite3"
    upgrade(f"sqlite:///{path}")
    row = "insert into saved_comment (owner_id, text, text_sha256, created_at, updated_at)"
    with sqlite3.connect(path) as db:
        db.execute(f"{row} values (1, 'Say why.', 'abc', '2026-01-01', '2026-01-01')")
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(f"{row} values (1, 'Say why.', 'abc', '2026-01-01', '2026-01-01')")
        db.execute("insert into practice_settings (learner_id, show_streak) values (1, 0)")
        with pytest.raises(sqlite3.IntegrityError):
            db.execute("insert into practice_settings (learner_id, show_streak) values (1, 1)")
    downgrade(f"sqlite:///{path}", "0021")
    assert {"saved_comment", "practice_settings"}.isdisjoint(tables(path))


def test_0024_keeps_each_revision_once_and_for_one_thing(empty_database: str) -> None:
    """diagnosis_revision as 0024 makes it, on each backend: a case attempt's revision number is
    stored once, a row revises a case attempt or a round (not both, not neither), and a step
    down to 0023 drops the table and keeps the case attempts it pointed at."""
    url = empty_database
    upgrade(url, "0023")
    with engine_for(url) as engine, engine.begin() as db:
        db.execute(
            text(
                "insert into case_attempt (id, learner_id, case_key, number, cause, seed, knobs,"
                " budget, stage, created_at) values (7, 1, 'a-fresh-head', 1,"
                " 'backbone-not-optimized', 7, '{}', 3, 'revealed', '2026-12-03 12:00:00+00')"
            )
        )
    upgrade(url, "0024")
    columns = (
        "insert into diagnosis_revision (case_attempt_id, round_id, learner_id, number,"
        " diagnosis, note, comment, created_at) values ({}, NULL, 1, {}, '{{}}', '', '',"
        " '2026-12-03 12:00:00+00')"
    )
    with engine_for(url) as engine:
        with engine.begin() as db:
            db.execute(text(columns.format(7, 1)))
            db.execute(text(columns.format(7, 2)))
        for refused in (columns.format(7, 1), columns.format("NULL", 3)):
            with pytest.raises(IntegrityError), engine.begin() as db:
                db.execute(text(refused))
        with engine.connect() as db:
            numbers = db.execute(text("select number from diagnosis_revision order by number"))
            assert [number for (number,) in numbers] == [1, 2]
    downgrade(url, "0023")
    with engine_for(url) as engine, engine.connect() as db:
        assert "diagnosis_revision" not in inspect(engine).get_table_names()
        assert db.execute(text("select id from case_attempt")).all() == [(7,)]


def test_0025_keeps_each_help_rung_once_and_comments_beside_their_run(tmp_path: Path) -> None:
    """A learner takes a rung of an exercise's help ladder once (its row holds when); a step
    down to 0024 drops both tables and keeps the help rows beside them."""
    path = tmp_path / "0025.sqlite3"
    upgrade(f"sqlite:///{path}")
    step = (
        "insert into exercise_help_step (learner_id, exercise_slug, step, taken_at)"
        " values (1, 'overfit-ladder', '{}', '2026-12-04 12:00:00')"
    )
    with sqlite3.connect(path) as db:
        db.execute(
            "insert into exercise_help (learner_id, exercise_slug, hints_taken, updated_at)"
            " values (1, 'overfit-ladder', 1, '2026-12-04 12:00:00')"
        )
        db.execute(step.format("hint-1"))
        db.execute(step.format("solution"))
        with pytest.raises(sqlite3.IntegrityError):
            db.execute(step.format("hint-1"))
    downgrade(f"sqlite:///{path}", "0024")
    assert {"exercise_help_step", "exercise_run_comment"}.isdisjoint(tables(path))
    with sqlite3.connect(path) as db:
        assert db.execute("select hints_taken from exercise_help").fetchall() == [(1,)]
