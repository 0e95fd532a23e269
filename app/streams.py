"""The live event stream of one attempt: status, then its points as they are stored, then done.

The database is the source of every event: the stream keeps a cursor (the highest metric point id
it has sent) and, each time the attempt changes, sends the points stored after it. The cursor is
the SSE event id of each `points` event, so a browser that reconnects (`Last-Event-ID`) or a page
that already drew some points (`?after=`) gets only what it lacks: no point is shown twice or
missed, whichever web process wrote, announced or serves it.
"""

import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, cast

from sqlalchemy import Engine, and_, bindparam, select
from sqlmodel import col
from starlette.concurrency import run_in_threadpool

from app.broker import AttemptEventBroker
from app.models import Attempt, AttemptStatus, MetricPoint

# A stream looks at the database at least this often even without a wake-up: the backstop for
# one lost while a change feed reconnects. Cheap: one indexed query per open stream.
LOOK_ANYWAY_S = 2.0


Point = tuple[int, str, int, float | None]  # (id, metric, step, value)


@dataclass(frozen=True)
class Snapshot:
    status: str
    points: list[Point]  # by id

    @property
    def final(self) -> bool:
        return AttemptStatus(self.status).is_final


# One statement, so status and points come from one snapshot; Core, not the ORM: every open
# stream runs it at each change of its attempt.
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
    with engine.connect() as connection:
        rows = connection.execute(_READ_AFTER, {"attempt_id": attempt_id, "cursor": cursor}).all()
    status = rows[0][0]
    if rows[0][1] is None:  # the outer join's one row: no point after the cursor
        return Snapshot(status, [])
    # A slice of a row is a plain tuple: no unpacking and repacking of every point. (Every row
    # has a point's id now: the join found some.)
    return Snapshot(status, cast(list[Point], [row[1:] for row in rows]))


def points_event(points: list[Point]) -> dict[str, str]:
    payload = [point[1:] for point in points]  # [metric, step, value]: JSON makes a tuple a list
    return {"event": "points", "id": str(points[-1][0]), "data": json.dumps({"points": payload})}


Rename = Callable[[str], str | None]


def renamed(points: list[Point], rename: Rename) -> list[Any]:
    """The points a viewer may see, under the names it shows them by (None: not shown)."""
    shown = []
    for point_id, name, step, value in points:
        label = rename(name)
        if label is not None:
            shown.append((point_id, label, step, value))
    return shown


async def attempt_events(
    engine: Engine,
    broker: AttemptEventBroker,
    attempt_id: int,
    *,
    after: int = 0,
    rename: Rename | None = None,
) -> AsyncIterator[dict[str, Any]]:
    """`rename` maps each metric name to the name the viewer sees, or None to leave it out (a
    case shows its runs under neutral names: a drill's may tell the cause)."""
    # Subscribe before the first read, so a change stored in between still wakes the loop.
    subscription = broker.subscribe(attempt_id)
    try:
        cursor, status = after, None
        while True:
            snapshot = await run_in_threadpool(read_after, engine, attempt_id, cursor)
            if snapshot.status != status:
                status = snapshot.status
                yield {"event": "status", "data": status}
            if snapshot.points:
                cursor = snapshot.points[-1][0]
                points = renamed(snapshot.points, rename) if rename else snapshot.points
                if points:
                    yield points_event(points)
            if snapshot.final:
                yield {"event": "done", "data": status}
                return
            await subscription.wait(LOOK_ANYWAY_S)
    finally:
        broker.unsubscribe(attempt_id, subscription)
