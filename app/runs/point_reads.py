"""Reading one attempt's metric points after a cursor, in the order they were stored: what the
live streams send and the attempt pages draw.

On SQLite the points come back as one row, one JSON text. Python's sqlite3 lets go of the GIL for
every row it steps to and takes it back after, so a thread reading a run's 600 rows while the
event loop is busy waits for the GIL 600 times: measured with a busy thread beside it, 3.7 ms of
the reading thread's CPU and 180 ms of wall time, against 0.45 ms and 4 ms as one row. Values are
written with 17 significant digits, which read back exactly (SQLite's own JSON writes 15), and
SQLite 3.40's printf rounds them correctly below 1e120 in magnitude (a float32 metric stops at
3.4e38; tests/app/runs/test_stream_reads.py checks float32s and magnitudes from 1e-320). Its printf
writes NULL (a non-finite value) as 0.0, hence the CASE. PostgreSQL's driver hands over a
result's rows at once: there they come as rows.
"""

from dataclasses import dataclass
from typing import Any, cast

import pydantic_core
from sqlalchemy import Connection, bindparam, select, text
from sqlmodel import col

from app.runs.models import MetricPoint

# (metric, step, value): a row's slice, or a list from SQLite's JSON; both unpack and encode alike.
PointRow = tuple[str, int, float | None]

# The attempt's points after :cursor, as (highest id, JSON text); both NULL when there are none.
# group_concat keeps the order of the subquery it reads (an aggregate over an ordered subquery is
# not flattened), which the tests check with interleaved attempts.
SQLITE_POINTS_AS_JSON = """
    SELECT max(id) AS last_id,
           '[' || group_concat(
               '[' || json_quote(name) || ',' || step || ','
                   || CASE WHEN value IS NULL THEN 'null' ELSE printf('%!.17g', value) END
                   || ']',
               ','
           ) || ']' AS points
    FROM (
        SELECT id, name, step, value FROM metric_point
        WHERE attempt_id = :attempt_id AND id > :cursor
        ORDER BY id
    )
"""

_POINTS_AFTER_SQLITE = text(SQLITE_POINTS_AS_JSON)

_POINTS_AFTER = (
    select(
        col(MetricPoint.id), col(MetricPoint.name), col(MetricPoint.step), col(MetricPoint.value)
    )
    .where(
        col(MetricPoint.attempt_id) == bindparam("attempt_id"),
        col(MetricPoint.id) > bindparam("cursor"),
    )
    .order_by(col(MetricPoint.id))
)


@dataclass(frozen=True)
class PointsAfter:
    points: list[PointRow]  # in id order
    cursor: int  # the highest id among them (the cursor read after, when there are none)


def from_json(last_id: int | None, points: str | None, cursor: int) -> PointsAfter:
    """The points of SQLITE_POINTS_AS_JSON's row (read alone or beside other columns)."""
    if points is None or last_id is None:
        return PointsAfter([], cursor)
    return PointsAfter(pydantic_core.from_json(points), int(last_id))


def from_rows(rows: list[Any], cursor: int) -> PointsAfter:
    """The points of (..., id, name, step, value) rows, the id fourth from the end."""
    if not rows:
        return PointsAfter([], cursor)
    # A slice of a row is a plain tuple: no unpacking and repacking of every point.
    return PointsAfter(cast(list[PointRow], [row[-3:] for row in rows]), int(rows[-1][-4]))


def points_after(connection: Connection, *, attempt_id: int, cursor: int = 0) -> PointsAfter:
    parameters = {"attempt_id": attempt_id, "cursor": cursor}
    if connection.dialect.name == "sqlite":
        last_id, points = connection.execute(_POINTS_AFTER_SQLITE, parameters).one()
        return from_json(last_id, points, cursor)
    return from_rows(list(connection.execute(_POINTS_AFTER, parameters).all()), cursor)
