"""A class at once, as a regression test: simulated learners against a real server on the
embedded default (its own SQLite database, two local workers). Only the zero-error promises are
asserted; speed and queue wait are measured by `python -m bench.class_load` (README)."""

import pytest

from support.classroom import run_class
from support.server import started_server

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def test_a_class_of_25_gets_no_error_no_lost_stream_and_no_lost_point() -> None:
    with started_server() as server:
        report = run_class(
            server.url,
            learners=25,
            seconds=30,
            database_url=server.database_url,
            think_s=1.0,
            arrive_over_s=0,  # all at once: the harshest start
        )
        problems = server.log_problems()
    assert report.runs_completed >= 25, report.summary()
    assert set(report.statuses) == {"succeeded"}, report.summary()
    assert report.server_errors == 0 and report.client_errors == 0, report.status_counts
    assert report.connection_errors == []
    assert report.streams_without_done == []
    assert report.points_checked > 0
    assert report.lost_points == 0 and report.repeated_points == 0
    assert problems == []
