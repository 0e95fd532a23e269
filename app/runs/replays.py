"""Replaying an attempt's stored command and judging whether the numbers came out the same.

CPU runs are deterministic for the same torch version, thread count and CPU capability, so on the
same kind of machine a replay must reproduce the metrics digest exactly. Across machines the last
bits may differ; values that agree within a relative tolerance still confirm the claim.
"""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, select

from app.models.time import utcnow
from app.runner.dispatcher import AttemptRunner
from app.runs import evidence
from app.runs.models import Attempt, AttemptStatus
from app.runs.replay_models import Replay, ReplayStatus, ReplayVerdict

RELATIVE_TOLERANCE = 1e-5
ABSOLUTE_TOLERANCE = 1e-8


@dataclass(frozen=True)
class Comparison:
    verdict: ReplayVerdict
    max_relative_difference: float | None
    first_difference: str | None


Series = Mapping[str, Sequence[Sequence[Any]]]


def compare_metrics(
    original: Series, original_digest: str | None, replay: Series, replay_digest: str | None
) -> Comparison:
    if not original or not replay:
        return Comparison(ReplayVerdict.not_comparable, None, "no metrics to compare")
    if original_digest is not None and original_digest == replay_digest:
        return Comparison(ReplayVerdict.identical, 0.0, None)
    if set(original) != set(replay):
        missing = sorted(set(original) ^ set(replay))
        return Comparison(ReplayVerdict.differs, None, f"different metrics: {', '.join(missing)}")
    worst = 0.0
    first: str | None = None
    for name in sorted(original):
        before, after = original[name], replay[name]
        if [p[0] for p in before] != [p[0] for p in after]:
            return Comparison(ReplayVerdict.differs, None, f"{name}: different steps")
        for (step, a), (_, b) in zip(before, after, strict=True):
            if a is None or b is None or not (math.isfinite(a) and math.isfinite(b)):
                if a != b:
                    return Comparison(ReplayVerdict.differs, None, f"{name} at step {step}")
                continue
            relative = abs(a - b) / max(abs(a), ABSOLUTE_TOLERANCE)
            worst = max(worst, relative)
            if first is None and abs(a - b) > ABSOLUTE_TOLERANCE + RELATIVE_TOLERANCE * abs(a):
                first = f"{name} at step {step}: {a!r} then {b!r}"
    verdict = ReplayVerdict.differs if first else ReplayVerdict.within_tolerance
    return Comparison(verdict, worst, first)


def request_replay(session: Session, *, attempt: Attempt, requested_by: int) -> Replay:
    assert attempt.id is not None
    replay = Replay(attempt_id=attempt.id, requested_by=requested_by)
    session.add(replay)
    session.commit()
    session.refresh(replay)
    return replay


def start_replay(
    session: Session, runner: AttemptRunner, *, attempt: Attempt, requested_by: int
) -> Replay:
    """Store the replay, then dispatch it; a dispatch failure keeps it as failed evidence."""
    replay = request_replay(session, attempt=attempt, requested_by=requested_by)
    assert replay.id is not None
    try:
        runner.submit_replay(
            replay_id=replay.id, drill=attempt.drill_slug, knobs=attempt.knobs, seed=attempt.seed
        )
    except Exception as error:  # kept as evidence that the replay could not run
        fail_replay(session, replay=replay, error=f"Could not dispatch: {error}")
        session.commit()
    return replay


def finish_replay(session: Session, *, replay: Replay, record: dict[str, Any]) -> None:
    attempt = session.get(Attempt, replay.attempt_id)
    assert attempt is not None
    replay.status = ReplayStatus.finished
    replay.digest = record.get("digest")
    replay.environment = record.get("environment")
    replay.finished_at = utcnow()
    replayed_status = AttemptStatus.of_run(record.get("status", ""))
    if replayed_status != attempt.status:
        replay.verdict = ReplayVerdict.differs
        replay.first_difference = f"status: {attempt.status} then {replayed_status}"
    else:
        comparison = compare_metrics(
            evidence.metric_series(session, attempt_id=replay.attempt_id),
            attempt.digest,
            record.get("metrics") or {},
            replay.digest,
        )
        replay.verdict = comparison.verdict
        replay.max_relative_difference = comparison.max_relative_difference
        replay.first_difference = comparison.first_difference
    session.add(replay)


def fail_replay(session: Session, *, replay: Replay, error: str) -> None:
    replay.status = ReplayStatus.failed
    replay.error = error
    replay.finished_at = utcnow()
    session.add(replay)


def replays_of(session: Session, *, attempt_id: int) -> list[Replay]:
    return list(
        session.exec(
            select(Replay).where(Replay.attempt_id == attempt_id).order_by(col(Replay.id).desc())
        ).all()
    )


def reap_unfinished_replays(session: Session, *, reason: str) -> None:
    for replay in session.exec(select(Replay).where(Replay.status == ReplayStatus.queued)).all():
        fail_replay(session, replay=replay, error=reason)
    session.commit()
