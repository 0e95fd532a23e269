"""The live event stream of one attempt: status, then its points as they are stored, then done.

The database is the source of every event: the stream keeps a cursor (the highest metric point id
it has sent) and, each time the attempt changes, sends the points stored after it. The cursor is
the SSE event id of each `points` event, so a browser that reconnects (`Last-Event-ID`) or a page
that already drew some points (`?after=`) gets only what it lacks: no point is shown twice or
missed, whichever web process wrote, announced or serves it.

A stream that shows only some series (a case or round run: `rename`) counts instead: its cursor
is the number of shown points sent so far. Point ids are shared by every series of a run, so the
gap between two ids would count the points of the series the viewer is not shown (the loss stage
of a NaN hunt, say), which can tell causes apart.
"""

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any

import pydantic_core
from sqlalchemy import Engine, and_, bindparam, select, text
from sqlmodel import col
from sse_starlette import EventSourceResponse
from starlette.concurrency import run_in_threadpool

from app.runs import point_reads
from app.runs.broker import AttemptEventBroker
from app.runs.models import Attempt, AttemptStatus, MetricPoint
from app.runs.point_reads import PointRow

# A stream looks at the database at least this often even without a wake-up: the backstop for
# one lost while a change feed reconnects. Cheap: one indexed query per open stream.
LOOK_ANYWAY_S = 2.0


@dataclass(frozen=True)
class Snapshot:
    status: str
    points: list[PointRow]  # in id order
    cursor: int  # the highest id among the points (the cursor read after, when there are none)

    @property
    def final(self) -> bool:
        return AttemptStatus(self.status).is_final


# One statement, so status and points come from one snapshot; Core, not the ORM: every open
# stream runs it at each change of its attempt. On SQLite the points come as one JSON text
# (app/runs/point_reads.py says why); elsewhere as rows, the outer join giving one row without a
# point when there is none after the cursor.
_READ_AFTER_SQLITE = text(
    f"""
    SELECT attempt.status, after.last_id, after.points
    FROM attempt, ({point_reads.SQLITE_POINTS_AS_JSON}) AS after
    WHERE attempt.id = :attempt_id
    """
)
_READ_AFTER = (
    select(
        col(Attempt.status),
        col(MetricPoint.id),
        col(MetricPoint.name),
        col(MetricPoint.step),
        col(MetricPoint.value),
    )
    .select_from(Attempt)
    .outerjoin(
        MetricPoint,
        and_(
            col(MetricPoint.attempt_id) == col(Attempt.id),
            col(MetricPoint.id) > bindparam("cursor"),
        ),
    )
    .where(col(Attempt.id) == bindparam("attempt_id"))
    .order_by(col(MetricPoint.id))
)


def read_after(engine: Engine, attempt_id: int, cursor: int) -> Snapshot:
    """The attempt's status and its points stored after `cursor`. Read together: points read
    with a final status are all there is (the final record is stored in one transaction)."""
    parameters = {"attempt_id": attempt_id, "cursor": cursor}
    with engine.connect() as connection:
        if engine.dialect.name == "sqlite":
            status, last_id, points = connection.execute(_READ_AFTER_SQLITE, parameters).one()
            after = point_reads.from_json(last_id, points, cursor)
        else:
            rows = connection.execute(_READ_AFTER, parameters).all()
            status = rows[0][0]
            with_points = [] if rows[0][1] is None else list(rows)
            after = point_reads.from_rows(with_points, cursor)
    return Snapshot(status, after.points, after.cursor)


# Each stream's events are written here, not by sse_starlette's ServerSentEvent: every field is
# known to be one line (a status word, a number, compact JSON), so there is nothing to split, and
# the events of one look at the database go out as one chunk, one send through the middleware.
def encode_event(event: str, data: bytes, event_id: int | None = None) -> bytes:
    head = b"id: %d\r\n" % event_id if event_id is not None else b""
    return b"%sevent: %s\r\ndata: %s\r\n\r\n" % (head, event.encode(), data)


def points_event(points: list[PointRow], cursor: int) -> bytes:
    """[[metric, step, value], ...], under the stream's cursor as its id."""
    # pydantic-core's encoder (FastAPI's own dependency) writes the same JSON, with floats that
    # read back exactly, about seven times faster than json.dumps: a run's 600 points cost
    # 0.5 ms of the web process's CPU with the latter.
    return encode_event("points", pydantic_core.to_json({"points": points}), cursor)


Rename = Callable[[str], str | None]


@dataclass(frozen=True)
class StreamSource:
    """What a live stream follows: an attempt, and how its series are named to the viewer.
    Found by a plain `def` dependency (in the thread pool, where its reads wait without holding
    the event loop), which also closes the request's session: held for as long as the stream
    stays open, its pooled connection would be gone from the pool (a class watching its runs
    would hold all of them). The stream reads in short sessions of its own."""

    attempt_id: int
    rename: Rename | None = None


def event_stream(
    source: StreamSource,
    engine: Engine,
    broker: AttemptEventBroker,
    *,
    after: int,
    last_event_id: int | None,
) -> EventSourceResponse:
    """The stream's response: points after `after`, or after the `Last-Event-ID` a reconnecting
    browser sends (whichever is later), so none is sent twice; a comment every 15 s keeps
    proxies from closing a stream whose run waits in the queue."""
    cursor = max(after, last_event_id or 0)
    events = attempt_events(engine, broker, source.attempt_id, after=cursor, rename=source.rename)
    return EventSourceResponse(events, ping=15)


def renamed(points: list[PointRow], rename: Rename) -> list[Any]:
    """The points a viewer may see, under the names it shows them by (None: not shown)."""
    shown = []
    for name, step, value in points:
        label = rename(name)
        if label is not None:
            shown.append((label, step, value))
    return shown


async def attempt_events(
    engine: Engine,
    broker: AttemptEventBroker,
    attempt_id: int,
    *,
    after: int = 0,
    rename: Rename | None = None,
) -> AsyncIterator[bytes]:
    """The stream's events, encoded: each chunk holds what one look at the database found.
    `rename` maps each metric name to the name the viewer sees, or None to leave it out (a case
    shows its runs under neutral names: a drill's may tell the cause); with it, `after` and the
    event ids count shown points, not point ids."""
    # Subscribe before the first read, so a change stored in between still wakes the loop.
    subscription = broker.subscribe(attempt_id)
    try:
        cursor, status = after, None
        skip = sent = 0
        # Counting (see the module's docstring): read from the start, skip what was sent.
        if rename is not None:
            cursor, skip, sent = 0, after, after
        while True:
            snapshot = await run_in_threadpool(read_after, engine, attempt_id, cursor)
            events = []
            if snapshot.status != status:
                status = snapshot.status
                events.append(encode_event("status", status.encode()))
            if snapshot.points:
                cursor = snapshot.cursor
                points, event_id = snapshot.points, cursor
                if rename is not None:
                    points = renamed(points, rename)
                    dropped = min(skip, len(points))
                    points, skip = points[dropped:], skip - dropped
                    sent += len(points)
                    event_id = sent
                if points:
                    events.append(points_event(points, event_id))
            if snapshot.final:
                events.append(encode_event("done", snapshot.status.encode()))
                yield b"".join(events)
                return
            if events:
                yield b"".join(events)
            await subscription.wait(LOOK_ANYWAY_S)
    finally:
        broker.unsubscribe(attempt_id, subscription)
