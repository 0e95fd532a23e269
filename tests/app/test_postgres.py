"""The same app on PostgreSQL: the migrations go up, down and up again and agree with the models,
and a learner's run is stored and scored there as on SQLite. (Running the whole suite on both
databases is the scale-out issue's work; this is its first part.)"""

from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic import command
from distributed import LocalCluster
from fastapi.testclient import TestClient
from sqlalchemy import inspect

from app.config import Settings
from app.db import make_engine
from app.main import create_app
from app.migrate import alembic_config, downgrade, upgrade
from tests.conftest import PREDICTION, log_in, make_user, wait_until_final
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


def test_a_learner_runs_a_drill_with_a_numeric_prediction_on_postgres(
    postgres_url: str,
    cluster: LocalCluster,
    cluster_credentials: dict[str, Path],
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
