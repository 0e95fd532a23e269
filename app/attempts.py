"""Starting an attempt: validate everything first, store it, then dispatch it.

A rejected request stores nothing; an accepted one is stored before it is dispatched, so even a
dispatch failure leaves an evidence record that says what happened.

A request may carry a key (the drill form's one-time token, an API client's Idempotency-Key):
the same request sent again with the same key by the same learner answers with the run it
started, and starts nothing (with other choices it is a new run).
The check runs under the learner's row lock (app/row_locks.py) that the cap on unfinished runs
takes anyway, so two presses at once, in one web process or two, wait for each other; the unique
(learner_id, request_key) of the table backs it.
"""

import json
import math
import re
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, or_
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app import evidence
from app.attempt_changes import Change, announce
from app.fair_share import priority_of, take_turn
from app.field_errors import ErrorCollector, FieldErrors
from app.limits import MAX_PREDICTION, MAX_REQUEST_KEY, MAX_SEED
from app.models import Attempt, AttemptStatus, User, utcnow
from app.row_locks import lock_row
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
    # The request's one-time key: sent again, it answers with the run it started. None or "": none.
    key: str | None = None


REQUEST_KEY = re.compile(rf"[A-Za-z0-9._:-]{{1,{MAX_REQUEST_KEY}}}")


def new_request_key() -> str:
    """A fresh one-time key for a rendered run form (22 URL-safe characters)."""
    return secrets.token_urlsafe(16)


def _validated_key(raw: str | None) -> str | None:
    if raw is None or raw == "":
        return None
    if not REQUEST_KEY.fullmatch(raw):
        raise InvalidAttempt(
            "request_key",
            f"a request key is 1 to {MAX_REQUEST_KEY} letters, digits or . _ : -",
        )
    return raw


@dataclass(frozen=True)
class ValidAttempt:
    knobs: dict[str, Any]
    seed: int
    numeric: dict[str, float]
    key: str | None = None


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
    key = None
    with problems.checking():
        key = _validated_key(request.key)
    problems.raise_if_any(InvalidAttempt)
    return ValidAttempt(knobs, seed, numeric, key)


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
    key = valid.key
    if key is not None:
        # Before the cap is counted: the second press of a run that took the last place is the
        # same run, not one too many.
        lock_row(session, User, learner_id)
        earlier = started_by_key(session, learner_id=learner_id, key=key)
        if earlier is not None and _same_request(earlier, drill, request, valid):
            _commit_keeping_loaded(session)  # ends the transaction and its lock
            return earlier
        if earlier is not None:
            # A form used before, sent again with other choices (a page restored by the back
            # button): a new run, not a repeat; it keeps no key.
            key = None
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
        request_key=key,
    )
    session.add(attempt)
    try:
        _commit_keeping_loaded(session)
    except IntegrityError:
        # The same key stored meanwhile (the lock leaves no way to it that we know of): the
        # unique key kept a second run out; answer with the first.
        session.rollback()
        earlier = started_by_key(session, learner_id=learner_id, key=key) if key else None
        if earlier is None:
            raise
        return earlier
    dispatch(session, runner, attempt)
    return attempt


def started_by_key(session: Session, *, learner_id: int, key: str) -> Attempt | None:
    """The learner's run started by a request with this key, if any."""
    query = select(Attempt).where(
        col(Attempt.learner_id) == learner_id, col(Attempt.request_key) == key
    )
    return session.exec(query).first()


def _same_request(
    earlier: Attempt, drill: Drill, request: AttemptRequest, valid: ValidAttempt
) -> bool:
    """Whether a request repeats the one that started `earlier`: same drill, prediction, knobs,
    seed and numbers (compared as stored: JSON has lists where the knobs have tuples)."""
    asked = {
        "drill": drill.slug,
        "hypothesis": request.hypothesis,
        "prediction": request.prediction.strip(),
        "knobs": valid.knobs,
        "seed": valid.seed,
        "numeric": valid.numeric,
    }
    stored = {
        "drill": earlier.drill_slug,
        "hypothesis": earlier.hypothesis,
        "prediction": earlier.prediction_text,
        "knobs": earlier.knobs,
        "seed": earlier.seed,
        "numeric": earlier.numeric_predictions,
    }
    return bool(json.loads(json.dumps(asked)) == json.loads(json.dumps(stored)))


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
        not_dispatched(session, attempt, error)


def not_dispatched(session: Session, attempt: Attempt, error: Exception) -> None:
    """A stored attempt no worker could be sent: it ends failed now, saying why."""
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
