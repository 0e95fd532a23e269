"""The watchdog: a run stuck where the drill's own limit checks never get a say (inside one long
operation) is ended `timed_out` and its worker process replaced."""

import time
from collections.abc import Callable
from typing import Any

import pytest
from distributed import get_worker
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app
from app.runner import dispatcher
from tests.conftest import PREDICTION, log_in, make_user, wait_until_final


def stuck_run(attempt_id: int, database_url: str, *_: Any) -> None:
    """Stands in for execute_attempt: claims the attempt and keeps its heartbeat going (as a
    worker stuck inside one long op does), but never reports a step."""
    from app.runner.progress_store import ProgressStore

    store = ProgressStore(database_url, attempt_id)
    store.claim(get_worker().address)
    with store.heartbeat():
        time.sleep(120)
    return None


@pytest.mark.slow  # restarts a worker of the shared cluster (a fresh torch process)
def test_a_stuck_run_is_stopped_and_its_worker_replaced(
    make_settings: Callable[..., Settings], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(make_settings(time_limit_s=0.5, watchdog_grace_s=0.5))
    with TestClient(app) as client:
        make_user(app.state.engine, "learner-a")
        log_in(client, "learner-a")
        runner = app.state.runner
        workers_before = set(runner.client.scheduler_info()["workers"])

        monkeypatch.setattr(dispatcher, "execute_attempt", stuck_run)
        body: dict[str, Any] = {"drill": "overfit-one-batch", **PREDICTION}
        stuck = client.post("/api/attempts", json=body).json()
        attempt = wait_until_final(client, stuck["id"], timeout=30)
        assert attempt["status"] == "timed_out"
        assert "watchdog" in attempt["error"] and "0.5 s" in attempt["error"]
        stuck_worker = attempt["worker"]

        monkeypatch.undo()
        deadline = time.monotonic() + 60
        while stuck_worker in runner.client.scheduler_info()["workers"]:
            assert time.monotonic() < deadline, "the stuck worker was never replaced"
            time.sleep(0.2)
        runner.client.wait_for_workers(len(workers_before), timeout=60)
        # The replacement is a fresh process whose first run pays torch's warm-up: on a loaded
        # machine that alone can pass the 0.5 s limit, which was only there to catch the stuck run.
        monkeypatch.setattr(app.state.settings, "time_limit_s", 60.0)
        body["knobs"] = {"steps": 20}
        after = wait_until_final(client, client.post("/api/attempts", json=body).json()["id"])
        assert after["status"] == "succeeded", after["error"]
