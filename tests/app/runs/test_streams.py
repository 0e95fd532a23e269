"""Live event streams under a class: open streams hold no database connection while they wait,
so the rest of the site keeps answering however many learners watch their runs."""

import threading
import time
from collections.abc import Callable

from sqlmodel import Session as DatabaseSession

from app.core.config import Settings
from app.main import create_app
from app.runner.events import Ended
from app.runs import evidence
from app.runs.models import AttemptStatus
from support.learner import Session, StreamLog, follow
from tests.app.factories import add_unfinished_attempt
from tests.conftest import PASSWORD, make_user
from tests.live import serving

STREAMS = 8  # four times what the pool below can hand out


def test_open_streams_hold_no_connection_and_pages_keep_answering(
    make_settings: Callable[..., Settings],
) -> None:
    # A pool of two connections that gives up after 2 s: a stream keeping its request's
    # connection would starve the third request.
    # (The attempt below has no worker to send heartbeats: the housekeeping must not end it.)
    settings = make_settings(
        db_pool_size=2, db_max_overflow=0, db_pool_timeout_s=2, heartbeat_timeout_s=600
    )
    app = create_app(settings)
    with serving(app) as url:
        learner = make_user(app.state.engine, "learner-a")
        attempt_id = add_unfinished_attempt(
            app.state.engine,
            learner.saved_id,
            status=AttemptStatus.running,
            scheduler_id=app.state.runner.scheduler_id,
        )
        browser = Session.logged_in(url, "learner-a", PASSWORD)
        logs = [StreamLog() for _ in range(STREAMS)]

        def watch(index: int) -> None:
            logs[index] = follow(browser, f"/api/attempts/{attempt_id}/events", timeout=30)

        watchers = [threading.Thread(target=watch, args=(i,)) for i in range(STREAMS)]
        for watcher in watchers:
            watcher.start()
        # Every stream is open and waiting (a fixed pause could end before they connect on a
        # busy machine, and the pages below would then answer fast for the wrong reason).
        deadline = time.monotonic() + 30
        while app.state.broker.watchers(attempt_id) < STREAMS:
            assert time.monotonic() < deadline, "the streams never all connected"
            time.sleep(0.05)

        for path in ("/", f"/attempts/{attempt_id}", f"/api/attempts/{attempt_id}"):
            started = time.monotonic()
            with browser.open(path) as response:
                assert response.status == 200
            # Well under the pool timeout: the request did not wait for a connection.
            assert time.monotonic() - started < 1.5, path

        # As a worker stores them: the streams hear of them through the change feed.
        with DatabaseSession(app.state.engine) as session:
            points = [("loss", 0, 1.0), ("loss", 1, 0.5)]
            evidence.insert_points(session, attempt_id=attempt_id, points=points)
            session.commit()
        app.state.writer.put(Ended(attempt_id, AttemptStatus.failed, "ended by the test"))
        for watcher in watchers:
            watcher.join(timeout=20)

    for log in logs:
        assert log.done_at is not None, log.events
        assert log.points == [("loss", 0), ("loss", 1)]
