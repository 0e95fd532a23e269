"""Keeping the judge's verdict on an exercise run, in the transaction that ends its attempt.

Called by app.runs.evidence.finish_from_record (on a worker, or in the web process when a worker
could not store its record): whichever process ends the run, its checks are stored with it.
"""

from typing import Any

from sqlmodel import Session, select

from app.exercises.models import MAX_OUTPUT, ExerciseRun
from app.runs.models import Attempt


def run_of(session: Session, attempt: Attempt) -> ExerciseRun | None:
    return session.exec(select(ExerciseRun).where(ExerciseRun.attempt_id == attempt.id)).first()


def keep_judgement(session: Session, *, attempt: Attempt, judgement: dict[str, Any]) -> None:
    """Store the judge's verdict on the attempt's run (in the transaction that ends it)."""
    run = run_of(session, attempt)
    if run is None:
        return
    status = judgement.get("status")
    run.judgement = status if isinstance(status, str) else "error"
    checks = judgement.get("checks")
    run.checks = checks if isinstance(checks, list) else []
    run.stdout = _capped(judgement.get("stdout"))
    run.stderr = _capped(judgement.get("stderr"))
    session.add(run)


def _capped(text: object) -> str:
    if not isinstance(text, str):
        return ""
    if len(text) <= MAX_OUTPUT:
        return text
    return text[:MAX_OUTPUT] + f"\n[… {len(text) - MAX_OUTPUT:,} more characters not kept]"
