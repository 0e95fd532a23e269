"""The same app on PostgreSQL: the migrations go up, down and up again and agree with the models,
and a learner's run is stored and scored there as on SQLite. (Running the whole suite on both
databases is the scale-out issue's work; this is its first part.)"""

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from distributed import LocalCluster
from fastapi.testclient import TestClient
from sqlalchemy import inspect, text
from sqlmodel import Session

from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import alembic_config, downgrade, upgrade
from app.main import create_app
from app.runs.models import Attempt
from tests.conftest import PREDICTION, ClusterCredentials, log_in, make_user, wait_until_final
from tests.postgres import throwaway_database


@pytest.fixture
def postgres_url() -> Iterator[str]:
    with throwaway_database() as url:
        yield url


def test_the_migrations_go_up_down_and_up_and_match_the_models(postgres_url: str) -> None:
    upgrade(postgres_url)
    command.check(alembic_config(postgres_url))  # raises if a model has no migration
    downgrade(postgres_url, "base")
    engine = make_engine(postgres_url)
    assert set(inspect(engine).get_table_names()) <= {"alembic_version"}
    engine.dispose()
    upgrade(postgres_url)


# The JSON and timestamp columns and the key names, as information_schema reports them.
COLUMN_TYPES = """
    SELECT table_name, column_name, data_type FROM information_schema.columns
    WHERE table_schema = 'public' AND (data_type LIKE 'json%' OR data_type LIKE 'timestamp%')
"""
KEY_NAMES = """
    SELECT table_name, constraint_name FROM information_schema.table_constraints
    WHERE table_schema = 'public' AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY')
      AND table_name <> 'alembic_version'
"""
TIMESTAMPS = {
    "created_at",
    "predicted_at",
    "started_at",
    "finished_at",
    "heartbeat_at",
    "cancel_requested_at",
    "joined_at",
    "failed_at",
}


def test_0011_stores_json_as_jsonb_and_timestamps_with_their_zone(postgres_url: str) -> None:
    """A database as 0010 left it, with a row, brought to 0011: JSONB documents, zoned
    timestamps and the convention's key names, the row's values unchanged."""
    upgrade(postgres_url)
    downgrade(postgres_url, "0010")  # json and PostgreSQL's own key names
    engine = make_engine(postgres_url)
    with engine.begin() as connection:
        before = {tuple(row) for row in connection.execute(text(COLUMN_TYPES))}
        assert ("attempt", "knobs", "json") in before
        assert ("attempt", "heartbeat_at", "timestamp with time zone") in before
        assert ("attempt", "attempt_pkey") in {
            tuple(row) for row in connection.execute(text(KEY_NAMES))
        }
        connection.execute(
            text(
                "INSERT INTO attempt (learner_id, drill_slug, drill_version, hypothesis,"
                " prediction_text, predicted_at, knobs, seed, command, status, created_at,"
                " heartbeat_at) VALUES (1, 'overfit-one-batch', '1', 'fits', 'zero',"
                " '2026-12-01 09:00+00', '{\"steps\": 60, \"lr\": 0.1}', 3, 'python -m drills',"
                " 'running', '2026-12-01 09:00+00', '2026-12-01 10:00:00+00')"
            )
        )
    upgrade(postgres_url, "0011")  # the tables as 0011 knew them (0012 adds the case tables)
    with engine.begin() as connection:
        after = {tuple(row) for row in connection.execute(text(COLUMN_TYPES))}
        keys = {tuple(row) for row in connection.execute(text(KEY_NAMES))}
        default = connection.execute(
            text(
                "SELECT column_default FROM information_schema.columns"
                " WHERE table_name = 'attempt' AND column_name = 'numeric_predictions'"
            )
        ).scalar_one()
    assert {data_type for _, name, data_type in after if name not in TIMESTAMPS} == {"jsonb"}
    assert {data_type for _, name, data_type in after if name in TIMESTAMPS} == {
        "timestamp with time zone"
    }
    assert len(after) == len(before) == 25  # 9 JSON documents, 16 timestamps
    assert ("attempt", "pk_attempt") in keys and ("user", "pk_user") in keys
    assert ("submission", "fk_submission_failed_attempt_id_attempt") in keys
    assert all(name.startswith(("pk_", "fk_")) for _, name in keys), keys
    assert default == "'{}'::jsonb"
    upgrade(postgres_url)  # on to the head: the models read the row
    with Session(engine) as session:
        attempt = session.get(Attempt, 1)
        assert attempt is not None
        assert attempt.knobs == {"steps": 60, "lr": 0.1}
        assert attempt.numeric_predictions == {}  # the default, as a JSONB document
        assert attempt.heartbeat_at is not None
        assert attempt.heartbeat_at.isoformat() == "2026-12-01T10:00:00+00:00"  # read as UTC
    engine.dispose()
    command.check(alembic_config(postgres_url))


def test_a_learner_runs_a_drill_with_a_numeric_prediction_on_postgres(
    postgres_url: str,
    cluster: LocalCluster,
    cluster_credentials: ClusterCredentials,
    tmp_path: Path,
) -> None:
    upgrade(postgres_url)
    settings = Settings(
        environment="test",
        database_url=postgres_url,
        data_dir=tmp_path,
        scheduler_address=cluster.scheduler_address,
        secret_key="test-only-session-key",
        **cluster_credentials,
    )
    app = create_app(settings)
    with TestClient(app) as client:
        make_user(app.state.engine, "learner-a")
        log_in(client, "learner-a")
        response = client.post(
            "/api/attempts",
            json={
                "drill": "overfit-one-batch",
                **PREDICTION,
                "knobs": {"steps": 60},
                "numeric": {"final_loss": 0.0},
            },
        )
        assert response.status_code == 202, response.text
        attempt = wait_until_final(client, response.json()["id"])
        page = client.get(f"/attempts/{attempt['id']}")
    assert attempt["status"] == "succeeded", attempt["error"]
    assert len(attempt["metrics"]["loss"]) == 60
    assert [step for step, _ in attempt["metrics"]["loss"]] == list(range(60))
    assert attempt["prediction_matched"] is True
    assert attempt["numeric_matched"] == {"final_loss": True}
    assert page.status_code == 200 and "matched" in page.text
