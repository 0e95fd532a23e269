"""Reading and writing evidence records (attempts and their metric points).

Keyword-only functions over a Session; the routes and the runner's writer thread both use them, so
there is one place where an attempt changes state.
"""

import math
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from sqlalchemy import insert, text
from sqlmodel import Session, col, delete, select

from app.core.row_locks import lock_row
from app.models.time import utcnow
from app.runner.events import Point
from app.runs import point_reads
from app.runs.models import Attempt, AttemptStatus, Explanation, MetricPoint, drill_page_runs
from drills.core.contract import score_numeric_predictions
from drills.core.registry import UnknownDrill, get_drill


def _stored_value(value: float | str | None) -> float | None:
    """Metric values arrive as floats or as "nan"/"inf"/"-inf" strings (JSON has no NaN), and a
    record read back from JSON may give 1 for 1.0: a float always (a PostgreSQL array holds one
    type)."""
    if value is None or isinstance(value, str):
        return None
    return float(value) if math.isfinite(value) else None


# PostgreSQL: one statement of three array parameters, whatever the batch's size. The list form
# below becomes a multi-row VALUES with a placeholder per value, which psycopg parses anew in
# Python each time (it caches short statements only) and PostgreSQL plans anew: a sixth of a
# scale-out worker's time per run went there (py-spy, 8 submitters). ORDER BY the position hands
# out the ids in the batch's order, which is the order the streams send points in.
_INSERT_POINTS_FROM_ARRAYS = text(
    """
    WITH stored AS (
        INSERT INTO metric_point (attempt_id, name, step, value)
        SELECT :attempt_id, point.name, point.step, point.value
        FROM unnest(
            CAST(:names AS varchar[]),
            CAST(:steps AS integer[]),
            CAST(:point_values AS double precision[])
        ) WITH ORDINALITY AS point (name, step, value, position)
        ORDER BY point.position
        RETURNING id
    )
    SELECT max(id) FROM stored
    """
)


def insert_points(session: Session, *, attempt_id: int, points: Sequence[Point]) -> int:
    """Store points; return the highest id given to them (0 for none), the streams' cursor."""
    # One statement, not an ORM object per point: a class's runs store thousands a minute.
    if not points:
        return 0
    if session.get_bind().dialect.name == "postgresql":
        highest = session.execute(
            _INSERT_POINTS_FROM_ARRAYS,
            {
                "attempt_id": attempt_id,
                # An array holds one type.
                "names": [str(name) for name, _, _ in points],
                "steps": [int(step) for _, step, _ in points],
                "point_values": [_stored_value(value) for _, _, value in points],
            },
        ).scalar_one()
        return int(highest)
    ids = session.scalars(
        insert(MetricPoint).returning(col(MetricPoint.id)),
        [
            {"attempt_id": attempt_id, "name": name, "step": step, "value": _stored_value(value)}
            for name, step, value in points
        ],
    ).all()
    return max(int(i or 0) for i in ids)


def lock_attempt(session: Session, attempt_id: int) -> Attempt | None:
    """The attempt, fresh from the database and locked until the transaction ends: whoever ends
    an attempt reads and decides under it (app/core/row_locks.py)."""
    return lock_row(session, Attempt, attempt_id)


def mark_running(session: Session, *, attempt: Attempt, worker: str) -> bool:
    if attempt.status != AttemptStatus.queued:
        return False
    attempt.status = AttemptStatus.running
    attempt.started_at = utcnow()
    attempt.worker = worker
    session.add(attempt)
    return True


def finish_from_record(session: Session, *, attempt: Attempt, record: dict[str, Any]) -> None:
    """Store the worker's final record; its metric series replaces the points streamed so far.
    Only app.runs.lifecycle.end_run calls it: a run ends there, with every feature's hook."""
    assert attempt.id is not None
    attempt.status = AttemptStatus.of_run(record.get("status", ""))
    attempt.error = record.get("error")
    attempt.environment = record.get("environment")
    attempt.inputs = record.get("inputs")
    attempt.diagnostics = record.get("diagnostics")
    attempt.signature = record.get("signature")
    attempt.observed_hypothesis = record.get("observed")
    attempt.numeric_matched = _numeric_scores(attempt)
    attempt.digest = record.get("digest")
    attempt.compute_s = (record.get("timings") or {}).get("compute_s")
    attempt.finished_at = utcnow()
    attempt.started_at = attempt.started_at or attempt.finished_at
    _store_final_series(session, attempt=attempt, metrics=record.get("metrics") or {})
    session.add(attempt)


def _numeric_scores(attempt: Attempt) -> dict[str, bool | None] | None:
    """Score the attempt's numeric predictions against the signature just stored, with the bands
    of its drill as it ran (kept on the attempt, so later changes of a band rescore nothing)."""
    if not attempt.numeric_predictions:
        return None
    try:
        drill = get_drill(attempt.drill_slug)
    except UnknownDrill:  # retired while the run was under way
        return None
    return score_numeric_predictions(drill, attempt.numeric_predictions, attempt.signature or {})


def _store_final_series(
    session: Session, *, attempt: Attempt, metrics: dict[str, list[list[Any]]]
) -> None:
    """Make the stored points equal the record's series. Usually every point but the last few
    already streamed in: only those are added (rewriting all of them cost the one writer thread
    most of its time under a class). Stored points the record disagrees with are all replaced."""
    attempt_id = attempt.id
    assert attempt_id is not None
    wanted = {
        (name, int(step)): _stored_value(value)
        for name, series in metrics.items()
        for step, value in series
    }
    stored = session.exec(
        select(MetricPoint.name, MetricPoint.step, MetricPoint.value).where(
            MetricPoint.attempt_id == attempt.id
        )
    ).all()
    have = {(name, step): value for name, step, value in stored}
    if len(have) != len(stored) or any(
        wanted.get(key, ...) != value for key, value in have.items()
    ):
        session.exec(delete(MetricPoint).where(col(MetricPoint.attempt_id) == attempt.id))
        have = {}
    missing = [
        (name, step, value) for (name, step), value in wanted.items() if (name, step) not in have
    ]
    insert_points(session, attempt_id=attempt_id, points=missing)


def end_without_record(
    session: Session, *, attempt: Attempt, status: AttemptStatus, error: str
) -> bool:
    """End an attempt the worker could not finish (lost worker, watchdog, restart). Only
    app.runs.lifecycle.end_run calls it."""
    if attempt.final:
        return False
    attempt.status = status
    attempt.error = error
    attempt.finished_at = utcnow()
    session.add(attempt)
    return True


def metric_series(session: Session, *, attempt_id: int) -> dict[str, list[list[Any]]]:
    return series_and_cursor(session, attempt_id=attempt_id)[0]


def series_and_cursor(
    session: Session, *, attempt_id: int
) -> tuple[dict[str, list[list[Any]]], int]:
    """The attempt's series, and the highest point id among them: a live view drawn from these
    asks its stream for the points after that id only."""
    # Insertion order: series come out in the order the drill first reported them.
    stored = point_reads.points_after(session.connection(), attempt_id=attempt_id)
    series: dict[str, list[list[Any]]] = defaultdict(list)
    for name, step, value in stored.points:
        series[name].append([step, value])
    for points in series.values():
        points.sort(key=lambda point: int(point[0]))  # stragglers stored last still fall in line
    return dict(series), stored.cursor


def attempts_for(session: Session, *, learner_id: int, drill_slug: str | None) -> list[Attempt]:
    # A case's runs are not the learner's attempts of the drill: their knobs name the cause.
    query = select(Attempt).where(Attempt.learner_id == learner_id, drill_page_runs())
    if drill_slug is not None:
        query = query.where(Attempt.drill_slug == drill_slug)
    return list(session.exec(query.order_by(col(Attempt.id).desc())).all())


def latest_explanation(session: Session, *, attempt_id: int) -> Explanation | None:
    return session.exec(
        select(Explanation)
        .where(Explanation.attempt_id == attempt_id)
        .order_by(col(Explanation.id).desc())
    ).first()
