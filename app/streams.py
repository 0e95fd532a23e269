"""The live event stream of one attempt: what is stored so far, then what arrives, then done."""

import json
from collections.abc import AsyncIterator
from typing import Any

from sqlalchemy import Engine
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app import evidence
from app.broker import AttemptEventBroker
from app.models import Attempt


def _snapshot(engine: Engine, attempt_id: int) -> tuple[str, bool, dict[str, list[list[Any]]]]:
    with Session(engine) as session:
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None
        return attempt.status, attempt.final, evidence.metric_series(session, attempt_id=attempt_id)


def _finite_or_none(value: Any) -> float | None:
    return value if isinstance(value, int | float) and value == value else None


async def attempt_events(
    engine: Engine, broker: AttemptEventBroker, attempt_id: int
) -> AsyncIterator[dict[str, str]]:
    # Subscribe before reading the store, so nothing published in between is missed; points
    # already sent from the store are skipped by step.
    subscription = broker.subscribe(attempt_id)
    try:
        status, final, series = await run_in_threadpool(_snapshot, engine, attempt_id)
        last_step = {name: points[-1][0] for name, points in series.items() if points}
        backlog = [[name, step, value] for name, points in series.items() for step, value in points]
        yield {"event": "status", "data": status}
        if backlog:
            yield {"event": "points", "data": json.dumps({"points": backlog})}
        if final:
            yield {"event": "done", "data": status}
            return
        while True:
            event = await subscription.queue.get()
            if event.kind == "points":
                fresh = [
                    [name, step, _finite_or_none(value)]
                    for name, step, value in event.data["points"]
                    if step > last_step.get(name, -1)
                ]
                for name, step, _ in fresh:
                    last_step[name] = step
                if fresh:
                    yield {"event": "points", "data": json.dumps({"points": fresh})}
            elif event.kind == "status" and event.data["status"] != status:
                status = str(event.data["status"])
                yield {"event": "status", "data": status}
            elif event.kind == "done":
                yield {"event": "done", "data": str(event.data["status"])}
                return
    finally:
        broker.unsubscribe(attempt_id, subscription)
