"""What the database says about a measured window: queue waits and compute times of the attempts
created in it, and how many rows and bytes an attempt costs.

Read straight from the tables (not through the API), so the benchmark sees every attempt of the
window, also those whose client gave up.
"""

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.engine import make_url
from sqlmodel import Session, col

from app.core.db import make_engine
from app.runs.models import Attempt, MetricPoint


@dataclass(frozen=True)
class WindowAttempts:
    queue_wait_s: list[float]  # started_at - created_at
    compute_s: list[float]
    statuses: dict[str, int]


def last_attempt_id(database_url: str) -> int:
    """The newest attempt's id (0 for none): attempts above it were created after this call."""
    engine = make_engine(database_url)
    try:
        with Session(engine) as session:
            return int(session.execute(select(func.max(col(Attempt.id)))).scalar() or 0)
    finally:
        engine.dispose()


def attempts_after(database_url: str, attempt_id: int) -> WindowAttempts:
    engine = make_engine(database_url)
    try:
        with Session(engine) as session:
            rows = session.execute(
                select(
                    col(Attempt.status),
                    col(Attempt.created_at),
                    col(Attempt.started_at),
                    col(Attempt.compute_s),
                ).where(col(Attempt.id) > attempt_id)
            ).all()
    finally:
        engine.dispose()
    statuses: dict[str, int] = {}
    for status, *_ in rows:
        statuses[status] = statuses.get(status, 0) + 1
    return WindowAttempts(
        queue_wait_s=[
            (started - created).total_seconds() for _, created, started, _ in rows if started
        ],
        compute_s=[compute for *_, compute in rows if compute is not None],
        statuses=statuses,
    )


def storage_per_attempt(database_url: str) -> dict[str, Any]:
    """Rows and bytes per attempt, over every attempt in the database. PostgreSQL: the attempt and
    metric_point tables with their indexes and TOAST (`pg_total_relation_size`); SQLite: the
    whole file (accounts and all), which is the most one could save by moving it elsewhere."""
    engine = make_engine(database_url)
    try:
        with Session(engine) as session:
            attempts = session.execute(select(func.count()).select_from(Attempt)).scalar_one()
            points = session.execute(select(func.count()).select_from(MetricPoint)).scalar_one()
            if engine.dialect.name == "postgresql":
                session.execute(text("ANALYZE attempt, metric_point"))
                table_bytes = {
                    table: session.execute(
                        text("SELECT pg_total_relation_size(:table)"), {"table": table}
                    ).scalar_one()
                    for table in ("attempt", "metric_point")
                }
                measured = "pg_total_relation_size(attempt) + pg_total_relation_size(metric_point)"
                total = sum(table_bytes.values())
                by_table = {
                    f"{table}_bytes_per_attempt": round(size / attempts) if attempts else None
                    for table, size in table_bytes.items()
                }
            else:
                path = make_url(database_url).database or ""
                total = sum(
                    p.stat().st_size
                    for p in Path(path).parent.glob(Path(path).name + "*")  # with -wal, -shm
                )
                measured = "SQLite file (with -wal), everything in it"
                by_table = {}
    finally:
        engine.dispose()
    return {
        "attempts": attempts,
        "metric_points_per_attempt": round(points / attempts, 1) if attempts else None,
        "bytes_per_attempt": round(total / attempts) if attempts else None,
        "measured": measured,
    } | by_table
