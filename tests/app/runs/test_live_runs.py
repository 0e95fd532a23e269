"""Real runs on the test cluster: a learner cancels a running attempt and keeps its evidence; a
browser that reconnects to a stream gets the rest of the points, none twice."""

import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from distributed import get_worker
from fastapi import FastAPI
from sqlmodel import Session as DatabaseSession
from sqlmodel import col, func, select

from app.core.config import Settings
from app.main import create_app
from app.runner import dispatcher
from app.runs import evidence
from app.runs.models import AttemptStatus, MetricPoint
from support.learner import Session, follow
from tests.conftest import PASSWORD, PREDICTION, make_user
from tests.live import serving

LONG_RUN = {"drill": "overfit-one-batch", **PREDICTION, "knobs": {"steps": 2000}}


@pytest.fixture
def live(make_settings: Callable[..., Settings]) -> Iterator[tuple[FastAPI, Session]]:
    app = create_app(make_settings())
    with serving(app) as url:
        make_user(app.state.engine, "learner-a")
        yield app, Session.logged_in(url, "learner-a", PASSWORD)


def stored_points(app: FastAPI, attempt_id: int) -> int:
    with DatabaseSession(app.state.engine) as session:
        return session.exec(
            select(func.count(col(MetricPoint.id))).where(MetricPoint.attempt_id == attempt_id)
        ).one()


def wait_for(condition: Callable[[], bool], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_running_attempt_cancelled_by_its_learner_stops_and_keeps_its_points(
    live: tuple[FastAPI, Session],
) -> None:
    app, browser = live
    attempt_id = browser.post_json("/api/attempts", LONG_RUN)["id"]
    wait_for(lambda: stored_points(app, attempt_id) > 0)
    asked = browser.post_json(f"/api/attempts/{attempt_id}/cancel", {})
    assert asked["cancel_requested_at"] is not None
    log = follow(browser, f"/api/attempts/{attempt_id}/events", timeout=60)
    assert log.events[-1] == ("done", AttemptStatus.cancelled)
    attempt = browser.get_json(f"/api/attempts/{attempt_id}")
    assert attempt["status"] == "cancelled" and "cancelled at step" in attempt["error"]
    steps = [step for step, _ in attempt["metrics"]["loss"]]
    # Stopped part-way, with what it had reported kept as evidence.
    assert 0 < len(steps) and max(steps) < 1999
    assert stored_points(app, attempt_id) == sum(len(s) for s in attempt["metrics"].values())


def test_a_browser_that_reconnects_gets_the_rest_of_the_points_and_none_twice(
    live: tuple[FastAPI, Session],
) -> None:
    app, browser = live
    attempt_id = browser.post_json("/api/attempts", LONG_RUN)["id"]
    path = f"/api/attempts/{attempt_id}/events"
    first = follow(browser, path, hang_up_after_points=2)
    assert first.done_at is None and first.last_event_id is not None
    second = follow(browser, path, last_event_id=first.last_event_id)
    assert second.done_at is not None
    delivered = first.points + second.points
    assert len(delivered) == len(set(delivered))  # none twice
    with DatabaseSession(app.state.engine) as session:
        series = evidence.metric_series(session, attempt_id=attempt_id)
    stored = {(name, int(step)) for name, points in series.items() for step, _ in points}
    assert set(delivered) == stored  # none lost
    # A page that drew the stored points asks only for what comes after them.
    after = follow(browser, f"{path}?after={second.last_event_id}")
    assert after.points == [] and after.done_at is not None


def run_without_a_database(attempt_id: int, database_url: str, *_: Any) -> None:
    """Stands in for execute_attempt on a worker that cannot reach the database at the end."""
    from app.runner.progress_store import ProgressStore
    from app.runner.worker_task import RecordNotStored

    ProgressStore(database_url, attempt_id).claim(get_worker().address)
    raise RecordNotStored({"status": "ok", "metrics": {"loss": [[0, 2.0], [1, 0.5]]}})


def test_a_record_its_worker_could_not_store_is_stored_by_the_web_process(
    live: tuple[FastAPI, Session], monkeypatch: pytest.MonkeyPatch
) -> None:
    app, browser = live
    monkeypatch.setattr(dispatcher, "execute_attempt", run_without_a_database)
    attempt_id = browser.post_json("/api/attempts", LONG_RUN)["id"]
    log = follow(browser, f"/api/attempts/{attempt_id}/events", timeout=60)
    assert log.events[-1] == ("done", "succeeded")
    attempt = browser.get_json(f"/api/attempts/{attempt_id}")
    assert attempt["metrics"] == {"loss": [[0, 2.0], [1, 0.5]]}
