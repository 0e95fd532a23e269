"""Responses are gzip-compressed for browsers that accept it, except the live event streams: a
compressor holds bytes back until it has enough, and a learner would see the curve in bursts."""

import time
from collections.abc import Callable, Iterator

from fastapi.testclient import TestClient
from sqlmodel import Session as DatabaseSession

from app.core.config import Settings
from app.main import create_app
from app.runner.events import Ended
from app.runs import evidence
from app.runs.models import AttemptStatus
from support.learner import Session
from tests.app.factories import add_unfinished_attempt
from tests.conftest import PASSWORD, make_user
from tests.live import serving


def test_pages_are_compressed_for_browsers_that_accept_gzip(client: TestClient) -> None:
    page = client.get("/", headers={"Accept-Encoding": "gzip"})
    assert page.headers["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in page.headers["Vary"]
    assert "Content-Security-Policy" in page.headers
    plain = client.get("/", headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain.headers
    assert plain.text.startswith("<!doctype html>")


def events(lines: Iterator[bytes]) -> Iterator[str]:
    """The name of each event as its data line arrives."""
    name = ""
    for raw in lines:
        line = raw.decode().strip()
        if line.startswith("event:"):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("data:"):
            yield name


def test_a_live_stream_is_sent_uncompressed_event_by_event(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings(heartbeat_timeout_s=600))
    with serving(app) as url:
        learner = make_user(app.state.engine, "learner-a")
        attempt_id = add_unfinished_attempt(
            app.state.engine,
            learner.saved_id,
            status=AttemptStatus.running,
            scheduler_id=app.state.runner.scheduler_id,
        )
        browser = Session.logged_in(url, "learner-a", PASSWORD)
        # A socket timeout of 10 s: a stream held back in a compressor would stall a read.
        stream = browser.open(
            f"/api/attempts/{attempt_id}/events",
            timeout=10,
            headers={"Accept-Encoding": "gzip"},
        )
        with stream:
            assert stream.headers["Content-Type"].startswith("text/event-stream")
            assert stream.headers.get("Content-Encoding") is None
            names = events(iter(stream.readline, b""))
            assert next(names) == "status"  # arrives while the run is still going
            for step in range(3):  # each batch of points arrives before the next is stored
                with DatabaseSession(app.state.engine) as session:
                    evidence.insert_points(
                        session, attempt_id=attempt_id, points=[("loss", step, 1.0 / (step + 1))]
                    )
                    session.commit()
                started = time.monotonic()
                assert next(names) == "points"
                assert time.monotonic() - started < 5
            app.state.writer.put(Ended(attempt_id, AttemptStatus.failed, "ended by the test"))
            assert "done" in names
