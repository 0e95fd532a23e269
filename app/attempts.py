"""Starting an attempt: validate everything first, store it, then dispatch it.

A rejected request stores nothing; an accepted one is stored before it is dispatched, so even a
dispatch failure leaves an evidence record that says what happened.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, or_
from sqlmodel import Session, col, func, select

from app import evidence
from app.attempt_changes import Change, announce
from app.fair_share import priority_of, take_turn
from app.field_errors import ErrorCollector, FieldErrors
from app.limits import MAX_PREDICTION, MAX_SEED
from app.models import Attempt, AttemptStatus, utcnow
from app.runner.dispatcher import AttemptRunner
from drills.core.command import replay_command
from drills.core.contract import Drill
from drills.core.knobs import KnobError, resolve_knob, resolve_knobs


class InvalidAttempt(FieldErrors):
    """Fields of an attempt request are wrong; `errors` names each (e.g. "knobs.lr", "seed")."""


@dataclass(frozen=True)
class AttemptRequest:
    hypothesis: str
    prediction: str
    knobs: Mapping[str, object]
    seed: object
    # {signature key: number}; from a form the numbers are text, and an empty one predicts nothing.
    numeric: Mapping[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class ValidAttempt:
    knobs: dict[str, Any]
    seed: int
    numeric: dict[str, float]


def _validated_seed(raw: object) -> int:
    if isinstance(raw, bool):
        raise InvalidAttempt("seed", "seed must be a whole number")
    try:
        seed = int(raw) if isinstance(raw, int | str) else int(str(raw))
    except ValueError:
        raise InvalidAttempt("seed", f"seed must be a whole number, not {raw!r}") from None
    if not 0 <= seed <= MAX_SEED:
        raise InvalidAttempt("seed", f"seed must be between 0 and {MAX_SEED}")
    return seed


def _validated_numeric(drill: Drill, raw: Mapping[str, object]) -> dict[str, float]:
    """The drill's declared numeric predictions, as finite floats; blank form fields dropped."""
    problems = ErrorCollector()
    numbers: dict[str, float] = {}
    for key, value in raw.items():
        with problems.checking():
            number = _validated_number(drill, key, value)
            if number is not None:
                numbers[key] = number
    problems.raise_if_any(InvalidAttempt)
    return numbers


def _validated_number(drill: Drill, key: str, value: object) -> float | None:
    name = f"numeric.{key}"
    if key not in {prediction.key for prediction in drill.numeric_predictions}:
        raise InvalidAttempt(name, f"drill {drill.slug!r} asks for no number named {key!r}")
    if isinstance(value, str):  # a form field
        if not value.strip():
            return None
        text = value.strip()
        try:
            value = float(text)
        except ValueError:
            raise InvalidAttempt(name, f"{text[:40]!r} is not a number") from None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidAttempt(name, "the prediction must be a number")
    if not math.isfinite(value):
        raise InvalidAttempt(name, "the prediction must be a finite number")
    return float(value)


def _validated_knobs(drill: Drill, raw: Mapping[str, object]) -> dict[str, Any]:
    """Each knob checked on its own, so every bad one is named; then resolved as a whole."""
    problems = ErrorCollector()
    by_name = {knob.name: knob for knob in drill.knobs}
    for name, value in raw.items():
        if name not in by_name:
            known = ", ".join(sorted(by_name))
            unknown = KnobError(name, f"unknown knob for drill {drill.slug!r} (known: {known})")
            problems.add(f"knobs.{name}", str(unknown))
            continue
        try:
            resolve_knob(by_name[name], value)
        except KnobError as error:
            problems.add(f"knobs.{name}", str(error))
    problems.raise_if_any(InvalidAttempt)
    try:
        return resolve_knobs(drill, raw)
    except KnobError as error:
        raise InvalidAttempt(f"knobs.{error.knob}" if error.knob else "knobs", str(error)) from None


def validate(drill: Drill, request: AttemptRequest) -> ValidAttempt:
    """Return the resolved knobs, seed and numeric predictions, or raise InvalidAttempt naming
    every bad field."""
    problems = ErrorCollector()
    keys = {hypothesis.key for hypothesis in drill.hypotheses}
    if not request.hypothesis:
        problems.add("hypothesis", "pick a leading hypothesis before running")
    elif request.hypothesis not in keys:
        problems.add(
            "hypothesis", f"unknown hypothesis {request.hypothesis!r} for drill {drill.slug!r}"
        )
    prediction = request.prediction.strip()
    if not prediction:
        problems.add("prediction", "write what you expect to see before running")
    elif len(prediction) > MAX_PREDICTION:
        problems.add("prediction", f"the prediction is longer than {MAX_PREDICTION} characters")
    numeric: dict[str, float] = {}
    with problems.checking():
        numeric = _validated_numeric(drill, request.numeric)
    knobs: dict[str, Any] = {}
    with problems.checking():
        knobs = _validated_knobs(drill, request.knobs)
    seed = 0
    with problems.checking():
        seed = _validated_seed(request.seed)
    problems.raise_if_any(InvalidAttempt)
    return ValidAttempt(knobs, seed, numeric)


def start_attempt(
    session: Session,
    runner: AttemptRunner,
    *,
    drill: Drill,
    learner_id: int,
    request: AttemptRequest,
) -> Attempt:
    valid = validate(drill, request)
    knobs, seed = valid.knobs, valid.seed
    turn = take_turn(session, learner_id=learner_id, limit=runner.runs_per_learner)
    attempt = Attempt(
        learner_id=learner_id,
        drill_slug=drill.slug,
        drill_version=drill.version,
        hypothesis=request.hypothesis,
        prediction_text=request.prediction.strip(),
        numeric_predictions=valid.numeric,
        knobs=knobs,
        seed=seed,
        command=replay_command(drill.slug, knobs, seed),
        scheduler_id=runner.scheduler_id,
        queue_turn=turn,
    )
    session.add(attempt)
    _commit_keeping_loaded(session)
    dispatch(session, runner, attempt)
    return attempt


def _commit_keeping_loaded(session: Session) -> None:
    """Commit, keeping the session's objects as they are. A new row's every field is set here
    (its id comes back with the INSERT), so reading it back after the commit, as an expired
    object would, only cost a query on every run's start."""
    session.expire_on_commit = False
    try:
        session.commit()
    finally:
        session.expire_on_commit = True


def dispatch(session: Session, runner: AttemptRunner, attempt: Attempt) -> None:
    """Send a stored attempt to a worker; if that fails, the record stays with the reason."""
    assert attempt.id is not None
    try:
        runner.submit(
            attempt_id=attempt.id,
            drill=attempt.drill_slug,
            knobs=attempt.knobs,
            seed=attempt.seed,
            priority=priority_of(attempt.queue_turn),
        )
    except Exception as error:
        attempt.status = AttemptStatus.failed
        attempt.error = f"Could not dispatch the run to a worker: {error}"
        attempt.finished_at = utcnow()
        session.add(attempt)
        session.commit()


class AlreadyEnded(ValueError):
    """Cancel asked of an attempt that has ended already."""


CANCELLED_IN_QUEUE = "Cancelled by its learner before a worker started it."


def cancel_attempt(session: Session, *, attempt_id: int) -> Attempt:
    """A queued attempt ends `cancelled` now (a worker that takes its task later finds it ended
    and runs nothing); a running one is asked to stop: its worker reads the request with its
    heartbeat and stops at the next step it reports, keeping the points so far as evidence."""
    attempt = evidence.lock_attempt(session, attempt_id)
    if attempt is None or attempt.final:
        status = attempt.status if attempt else "gone"
        raise AlreadyEnded(f"attempt {attempt_id} has already ended ({status}); nothing to cancel")
    if attempt.status == AttemptStatus.queued:
        evidence.end_without_record(
            session, attempt=attempt, status=AttemptStatus.cancelled, error=CANCELLED_IN_QUEUE
        )
    elif attempt.cancel_requested_at is None:
        attempt.cancel_requested_at = utcnow()
        session.add(attempt)
    announce(session, Change(attempt_id, 0))
    session.commit()
    session.refresh(attempt)
    return attempt


def runs_ahead(session: Session, attempt: Attempt) -> int:
    """How many runs still wait for a worker ahead of this queued one: every learner's runs share
    the workers, handed out by turn, then in the order they were stored (app/fair_share.py)."""
    ahead = select(func.count()).where(
        Attempt.status == AttemptStatus.queued,
        or_(
            col(Attempt.queue_turn) < attempt.queue_turn,
            and_(col(Attempt.queue_turn) == attempt.queue_turn, col(Attempt.id) < attempt.id),
        ),
    )
    return int(session.exec(ahead).one())
