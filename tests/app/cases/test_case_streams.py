"""A case run's live stream counts the points it shows: its event ids say nothing of the series
the case hides (point ids are shared by every series of a run, so their gaps would count them)."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from sqlmodel import Session, func, select

from app.cases.models import CaseRun
from app.runs.models import MetricPoint
from tests.app.cases.test_cases import case_json, engine_of, open_case, wait_until_runs_end

CASE = "nan-some-way-in"  # nan-hunt: the symptom run logs series the case does not show


def points_events(client: TestClient, path: str, **headers: str) -> list[tuple[int, int]]:
    """(event id, number of points) of each `points` event of the stream."""
    with client.stream("GET", path, headers=headers) as stream:
        text = "".join(stream.iter_text())
    found = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line)
        if fields.get("event") == "points":
            found.append((int(fields["id"]), len(json.loads(fields["data"])["points"])))
    return found


def test_a_case_streams_ids_count_shown_points_and_resume_by_them(client: TestClient) -> None:
    case_attempt_id = open_case(client, CASE)
    body = wait_until_runs_end(client, case_attempt_id)
    run = body["runs"][0]
    shown = sum(
        len(points)
        for points in case_json(client, case_attempt_id)["runs"][0]["evidence"]["series"].values()
    )
    with Session(engine_of(client)) as session:
        attempt_id = session.get(CaseRun, run["id"]).attempt_id  # type: ignore[union-attr]
        stored = session.exec(
            select(func.count()).where(MetricPoint.attempt_id == attempt_id)
        ).one()
    assert 0 < shown < stored, "the run must hide some series for this test to mean anything"

    path = f"/cases/runs/{run['id']}/events"
    events = points_events(client, path)
    ids = [event_id for event_id, _ in events]
    assert ids[-1] == shown == sum(count for _, count in events)
    running = 0
    for event_id, count in events:
        running += count
        assert event_id == running

    # A reconnecting browser (Last-Event-ID) or a page that drew some (?after=) gets the rest.
    resumed = points_events(client, path, **{"Last-Event-ID": "5"})
    assert sum(count for _, count in resumed) == shown - 5 and resumed[-1][0] == shown
    after = points_events(client, f"{path}?after={shown - 1}")
    assert after == [(shown, 1)]
    assert points_events(client, f"{path}?after={shown}") == []
