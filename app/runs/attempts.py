"""Starting an attempt: validate everything first (app/runs/attempt_requests.py), store it, then
dispatch it.

A rejected request stores nothing; an accepted one is stored before it is dispatched, so even a
dispatch failure leaves an evidence record that says what happened. A request's one-time key
(app/web/request_keys.py) makes a second press answer with the run the first one started.

A hidden-bug run (`draw_key` given) takes its knobs and seed from a draw, not from the request
(drills/practice/hidden_setups.py): the learner's n-th hidden run of the drill, counted under
the learner's row lock that the cap on unfinished runs takes.
"""

from typing import Any

from sqlalchemy import and_, or_
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app.accounts.models import User
from app.core.row_locks import lock_row
from app.models.time import utcnow
from app.runner.dispatcher import AttemptRunner
from app.runs import evidence, lifecycle
from app.runs.attempt_changes import Change, announce
from app.runs.attempt_requests import AttemptRequest, InvalidAttempt, ValidAttempt, validate
from app.runs.fair_share import priority_of, take_turn
from app.runs.models import Attempt, AttemptStatus
from app.web.request_keys import repeats, started_by_key
from drills.core.contract import Drill
from drills.practice.hidden_setups import draw_hidden_setup


def start_attempt(
    session: Session,
    runner: AttemptRunner,
    *,
    drill: Drill,
    learner_id: int,
    request: AttemptRequest,
    draw_key: bytes | None = None,
) -> Attempt:
    """Start a run of the request's setup or, with `draw_key` (the server's secret for hidden
    setups), of a drawn one: then the request's knobs and seed must be left empty."""
    valid = validate(drill, request)
    knobs, seed = valid.knobs, valid.seed
    hidden = draw_key is not None
    key = valid.key
    if key is not None:
        # Before the cap is counted: the second press of a run that took the last place is the
        # same run, not one too many.
        lock_row(session, User, learner_id)
        earlier = started_by_key(session, learner_id=learner_id, key=key)
        if earlier is not None and repeats(
            earlier, _asked(drill, request, valid, hidden), hidden_setup=hidden
        ):
            _commit_keeping_loaded(session)  # ends the transaction and its lock
            return earlier
        if earlier is not None:
            # A form used before, sent again with other choices (a page restored by the back
            # button): a new run, not a repeat; it keeps no key.
            key = None
    turn = take_turn(session, learner_id=learner_id, limit=runner.runs_per_learner)
    if draw_key is not None:
        knobs, seed = _hidden_setup(session, drill, learner_id, draw_key)
    attempt = lifecycle.new_run(
        session,
        runner,
        learner_id=learner_id,
        drill=drill,
        knobs=knobs,
        seed=seed,
        turn=turn,
        hypothesis=request.hypothesis,
        prediction_text=request.prediction.strip(),
        numeric_predictions=valid.numeric,
        request_key=key,
        hidden_setup=hidden,
    )
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


def _asked(
    drill: Drill, request: AttemptRequest, valid: ValidAttempt, hidden: bool
) -> dict[str, Any]:
    """What a request asks for, as app.web.request_keys.repeats compares it with a stored run."""
    asked: dict[str, Any] = {
        "drill": drill.slug,
        "hypothesis": request.hypothesis,
        "prediction": request.prediction.strip(),
        "numeric": valid.numeric,
    }
    return asked if hidden else asked | {"knobs": valid.knobs, "seed": valid.seed}


def _hidden_setup(
    session: Session, drill: Drill, learner_id: int, draw_key: bytes
) -> tuple[dict[str, Any], int]:
    """The knobs and seed of the learner's next hidden-bug run of the drill (called under the
    learner's row lock: two runs at once are counted one after the other)."""
    made = session.exec(
        select(func.count())
        .select_from(Attempt)
        .where(
            col(Attempt.learner_id) == learner_id,
            col(Attempt.drill_slug) == drill.slug,
            col(Attempt.hidden_setup).is_(True),
        )
    ).one()
    try:
        draw = draw_hidden_setup(drill.slug, learner_id, made + 1, key=draw_key)
    except LookupError as error:
        raise InvalidAttempt("hidden_setup", str(error)) from None
    return draw.knobs, draw.seed


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
    """Send a stored attempt to a worker; if that fails, the record stays with the reason. A
    held attempt (no scheduler yet) stays stored: app/runs/backlog.py sends it when it may go."""
    assert attempt.id is not None
    if attempt.held:
        return
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
    """A stored attempt no worker could be sent: it ends failed now, saying why, the one way
    runs end, so that what waits on it (a case's fix run, a round) hears and is not stuck."""
    assert attempt.id is not None
    unended = lifecycle.lock_unended(session, attempt.id)
    if unended is not None:
        reason = f"Could not dispatch the run to a worker: {error}"
        lifecycle.end_run(session, unended, status=AttemptStatus.failed, error=reason)
    session.commit()
    session.refresh(attempt)


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
        lifecycle.end_run(
            session, attempt, status=AttemptStatus.cancelled, error=CANCELLED_IN_QUEUE
        )
    else:
        if attempt.cancel_requested_at is None:
            attempt.cancel_requested_at = utcnow()
            session.add(attempt)
        announce(session, Change(attempt_id, 0))
    session.commit()
    session.refresh(attempt)
    return attempt


def runs_ahead(session: Session, attempt: Attempt) -> int:
    """How many runs still wait for a worker ahead of this queued one: every learner's runs share
    the workers, handed out by turn, then in the order they were stored (app/runs/fair_share.py)."""
    ahead = select(func.count()).where(
        Attempt.status == AttemptStatus.queued,
        or_(
            col(Attempt.queue_turn) < attempt.queue_turn,
            and_(col(Attempt.queue_turn) == attempt.queue_turn, col(Attempt.id) < attempt.id),
        ),
    )
    return int(session.exec(ahead).one())
