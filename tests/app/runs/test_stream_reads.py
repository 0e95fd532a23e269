"""What every live stream does at each change of its attempt: read the points after its cursor
(in id order, through the (attempt, id) index, without sorting), and write them as SSE events
whose JSON gives back every value exactly."""

import json
import math
import random
import struct
from collections.abc import Callable
from typing import Any, cast

import pytest
from sqlalchemy import Engine, event
from sqlmodel import Session as DatabaseSession
from sqlmodel import col, select

from app.runs import evidence
from app.runs.broker import AttemptEventBroker
from app.runs.change_feed import SqlitePoller
from app.runs.models import AttemptStatus, MetricPoint
from app.runs.streams import encode_event, points_event, read_after
from tests.app.factories import add_unfinished_attempt
from tests.conftest import make_user


def _plans_of_point_reads(engine: Engine, read: Callable[[], object]) -> list[str]:
    """SQLite's plan of each statement on metric_point that `read` runs, as it runs it."""
    plans = []

    def explain(_c: object, cursor: Any, statement: str, parameters: Any, *_: object) -> None:
        if "metric_point" in statement:
            steps = cursor.connection.execute(f"EXPLAIN QUERY PLAN {statement}", parameters)
            plans.append("\n".join(str(step[-1]) for step in steps.fetchall()))

    event.listen(engine, "before_cursor_execute", explain)
    try:
        read()
    finally:
        event.remove(engine, "before_cursor_execute", explain)
    return plans


class _Watching:
    """A broker whose streams watch attempt 1 (the poller asks nothing else of it)."""

    def watched(self) -> set[int]:
        return {1}

    def publish(self, attempt_id: int) -> None:
        pass


def test_the_streams_and_the_change_feed_read_points_by_attempt_and_id_without_sorting(
    engine: Engine,
) -> None:
    if engine.dialect.name != "sqlite":
        pytest.skip("the query plan is SQLite's (PostgreSQL plans an empty table differently)")
    learner = make_user(engine, "learner-a")
    add_unfinished_attempt(engine, learner.saved_id, status=AttemptStatus.running)
    [stream] = _plans_of_point_reads(engine, lambda: read_after(engine, 1, 0))
    assert "ix_metric_point_attempt_id_id (attempt_id=? AND id>?)" in stream, stream
    assert "TEMP B-TREE" not in stream, stream  # no sort: the index gives id order
    poller = SqlitePoller(engine, cast(AttemptEventBroker, _Watching()))
    [feed] = _plans_of_point_reads(engine, poller.poll)
    assert "ix_metric_point_attempt_id_id" in feed, feed


def _float32(bits: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", bits))[0])


def test_points_after_a_cursor_come_in_id_order_and_encode_exactly(engine: Engine) -> None:
    learner = make_user(engine, "learner-a")
    attempt_id = add_unfinished_attempt(engine, learner.saved_id, status=AttemptStatus.running)
    other_id = add_unfinished_attempt(engine, learner.saved_id, status=AttemptStatus.running)
    draw = random.Random(7)
    # What metrics hold: ordinary values, any float32 (a drill's tensors), magnitudes from
    # vanishing to exploding gradients, and the awkward ones; each must come back exactly.
    values = [draw.uniform(-10, 10) for _ in range(100)]
    values += [_float32(draw.getrandbits(32)) for _ in range(200)]
    values += [draw.uniform(-1, 1) * 10 ** draw.randint(-320, 100) for _ in range(200)]
    values = [value for value in values if math.isfinite(value)]
    values += [0.1 + 0.2, 1e-7, 2.5e-310, 3.0, 0.0, math.inf]
    with DatabaseSession(engine) as session:
        # Interleaved with another attempt's points, in an order unlike (name, step).
        for index, value in enumerate(values):
            name = ("loss", "grad_norm", "accuracy")[index % 3]
            step = len(values) - index
            evidence.insert_points(session, attempt_id=attempt_id, points=[(name, step, value)])
            evidence.insert_points(session, attempt_id=other_id, points=[("loss", index, 0.5)])
        session.commit()

    everything = read_after(engine, attempt_id, 0)
    # In the order stored (not by name or step), every value exactly as stored; inf is NULL.
    assert [tuple(point) for point in everything.points] == [
        (("loss", "grad_norm", "accuracy")[index % 3], len(values) - index, value)
        for index, value in enumerate(values[:-1] + [None])
    ]
    assert everything.cursor > 0

    with DatabaseSession(engine) as session:
        ids = list(
            session.exec(
                select(MetricPoint.id)
                .where(MetricPoint.attempt_id == attempt_id)
                .order_by(col(MetricPoint.id))
            )
        )
    assert everything.cursor == ids[-1]
    later = read_after(engine, attempt_id, cast(int, ids[20]))
    assert [tuple(point) for point in later.points] == [
        tuple(point) for point in everything.points[21:]
    ]
    assert later.cursor == ids[-1]
    nothing_new = read_after(engine, attempt_id, ids[-1])
    assert nothing_new.points == [] and nothing_new.cursor == ids[-1]
    assert nothing_new.status == AttemptStatus.running

    # A page draws the same points as series: by metric in the order first reported, each by step.
    with DatabaseSession(engine) as session:
        series, page_cursor = evidence.series_and_cursor(session, attempt_id=attempt_id)
    assert page_cursor == ids[-1]
    assert list(series) == ["loss", "grad_norm", "accuracy"]
    for name, drawn in series.items():
        stored = [(step, value) for metric, step, value in everything.points if metric == name]
        assert [tuple(point) for point in drawn] == sorted(stored, key=lambda point: point[0])

    chunk = points_event(later.points, later.cursor)
    assert chunk.startswith(f"id: {ids[-1]}\r\nevent: points\r\ndata: ".encode())
    assert chunk.endswith(b"\r\n\r\n") and chunk.count(b"\r\n") == 4  # one line per field
    data = chunk.split(b"data: ", 1)[1].removesuffix(b"\r\n\r\n")
    assert json.loads(data)["points"] == [list(point) for point in later.points]


def test_a_status_event_has_no_id_so_a_reconnecting_browser_keeps_its_points_cursor() -> None:
    assert encode_event("status", b"running") == b"event: status\r\ndata: running\r\n\r\n"
    assert encode_event("points", b"{}", 42) == b"id: 42\r\nevent: points\r\ndata: {}\r\n\r\n"
