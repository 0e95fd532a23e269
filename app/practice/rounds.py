"""A learner's curve-diagnosis rounds: open one (the draw and its real run, started at once),
answer it with the five-part diagnosis once the run has ended, then see the truth and the score.

The draw depends on the learner, the day and the round's number that day, and avoids the
variants the learner met in the last week (drills/practice/rounds.py). The run is an ordinary
Attempt with `round_id` set: dispatched, streamed and kept like any other, and read only through
the round's pages until the learner has answered (its knobs and command name the cause).
"""

from __future__ import annotations

from dataclasses import asdict
from datetime import date, datetime, timedelta

from sqlalchemy import or_, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app.diagnosis.form import parse_diagnosis
from app.practice.round_models import DiagnosisRound
from app.runner.dispatcher import AttemptRunner
from app.runs import lifecycle
from app.runs.attempts import dispatch
from app.runs.fair_share import take_turn
from app.runs.models import Attempt, AttemptStatus
from drills.cases.contract import CaseSet
from drills.core.registry import get_drill
from drills.practice.round_answers import case_set_of, score_round
from drills.practice.rounds import REPEAT_AFTER_DAYS, RoundVariant, draw_round, get_variant


class RoundRefused(ValueError):
    """An answer the round cannot take now (409): the message says why."""


class RetiredRound(LookupError):
    """The round's variant has left the catalogue since it was drawn (410)."""


def variant_of(diagnosis_round: DiagnosisRound) -> RoundVariant:
    try:
        return get_variant(diagnosis_round.variant_key)
    except KeyError:
        raise RetiredRound(
            f"Round {diagnosis_round.id}'s setup has been retired from the catalogue."
        ) from None


def case_set_for(diagnosis_round: DiagnosisRound) -> CaseSet:
    return case_set_of(variant_of(diagnosis_round))


def run_of(session: Session, diagnosis_round: DiagnosisRound) -> Attempt | None:
    return session.exec(select(Attempt).where(Attempt.round_id == diagnosis_round.id)).first()


def is_void(run: Attempt | None) -> bool:
    """A run that ended without a reading (a lost worker, a timeout): nothing to diagnose."""
    return run is None or (run.final and run.observed_hypothesis is None)


def _open_round(session: Session, *, learner_id: int) -> DiagnosisRound | None:
    return session.exec(select(DiagnosisRound).where(DiagnosisRound.open_for == learner_id)).first()


def _close(session: Session, diagnosis_round: DiagnosisRound) -> None:
    """Free the learner's open slot (its run came to nothing, or its variant was retired)."""
    session.execute(
        update(DiagnosisRound)
        .where(col(DiagnosisRound.id) == diagnosis_round.id)
        .values(open_for=None)
    )
    session.commit()


def _answerable(session: Session, diagnosis_round: DiagnosisRound) -> bool:
    if is_void(run_of(session, diagnosis_round)):
        return False
    try:
        variant_of(diagnosis_round)
    except RetiredRound:
        return False
    return True


def unanswered_round(session: Session, *, learner_id: int) -> DiagnosisRound | None:
    """The learner's open round, unless its run came to nothing or its setup was retired."""
    found = _open_round(session, learner_id=learner_id)
    if found is None or not _answerable(session, found):
        return None
    return found


def recent_variants(session: Session, *, learner_id: int, today: date) -> set[str]:
    """The variants the learner was shown in the last week (a run that came to nothing showed
    nothing, so its variant may come again)."""
    since = today - timedelta(days=REPEAT_AFTER_DAYS - 1)
    shown = or_(
        col(Attempt.observed_hypothesis).is_not(None),
        col(Attempt.status).in_([AttemptStatus.queued, AttemptStatus.running]),
    )
    return set(
        session.exec(
            select(DiagnosisRound.variant_key)
            .join(Attempt, col(Attempt.round_id) == col(DiagnosisRound.id))
            .where(DiagnosisRound.learner_id == learner_id, col(DiagnosisRound.day) >= since, shown)
        ).all()
    )


def start_round(
    session: Session, runner: AttemptRunner, *, learner_id: int, now: datetime, key: bytes
) -> DiagnosisRound:
    """The learner's open round, or a new draw with its run dispatched (`key`: the server's
    draw secret). The round and its run are stored in one transaction. A learner has at most
    one open round (uq_diagnosis_round_open_for): of two presses at once, or two tabs, the second
    meets the constraint and is given the first's round."""
    existing = _open_round(session, learner_id=learner_id)
    if existing is not None:
        if _answerable(session, existing):
            return existing
        _close(session, existing)
    today = now.date()
    number = (
        1
        + session.exec(
            select(func.count())
            .select_from(DiagnosisRound)
            .where(DiagnosisRound.learner_id == learner_id, DiagnosisRound.day == today)
        ).one()
    )
    recent = recent_variants(session, learner_id=learner_id, today=today)
    drawn = draw_round(learner_id, today, int(number), recent, key=key)
    drill = get_drill(drawn.variant.drill)
    # A learner at the cap of unfinished runs gets no round either (app/runs/fair_share.py).
    turn = take_turn(session, learner_id=learner_id, limit=runner.runs_per_learner)
    diagnosis_round = DiagnosisRound(
        learner_id=learner_id,
        day=today,
        number=int(number),
        variant_key=drawn.variant.key,
        drill_slug=drill.slug,
        seed=drawn.seed,
        knobs=drawn.knobs,
        open_for=learner_id,
        created_at=now,
    )
    try:
        session.add(diagnosis_round)
        session.flush()
        run = lifecycle.new_run(
            session,
            runner,
            learner_id=learner_id,
            drill=drill,
            knobs=drawn.knobs,
            seed=drawn.seed,
            turn=turn,
            round_id=diagnosis_round.id,
        )
        session.commit()
    except IntegrityError:
        session.rollback()
        raced = _open_round(session, learner_id=learner_id)
        if raced is None:
            raise
        return raced  # the page says so if its run has already come to nothing
    session.refresh(diagnosis_round)
    session.refresh(run)
    dispatch(session, runner, run)
    return diagnosis_round


def answer_round(
    session: Session, diagnosis_round: DiagnosisRound, fields: dict[str, object], now: datetime
) -> None:
    """Check the diagnosis, score it against the run's own reading and store both, once. Bad
    fields raise InvalidCaseInput (422) before anything is stored; an answer the round cannot
    take raises RoundRefused (409)."""
    if diagnosis_round.answered_at is not None:
        raise RoundRefused("This round has been answered already: its answer stays as it was.")
    run = run_of(session, diagnosis_round)
    if is_void(run):
        raise RoundRefused("This round's run ended without a result; start a new round.")
    assert run is not None
    if not run.final:
        raise RoundRefused("Wait for the run to end: the whole curve is the evidence.")
    assert run.observed_hypothesis is not None
    diagnosis = parse_diagnosis(case_set_for(diagnosis_round), fields, before="you answer")
    score = score_round(variant_of(diagnosis_round), diagnosis, run.observed_hypothesis)
    stored = asdict(diagnosis) | {"alternatives": list(diagnosis.alternatives)}
    # Conditional on no answer yet: of two answers sent at once, one is stored (SQLite has no
    # row locks to make the check above enough).
    done = session.execute(
        update(DiagnosisRound)
        .where(col(DiagnosisRound.id) == diagnosis_round.id)
        .where(col(DiagnosisRound.answered_at).is_(None))
        .values(
            diagnosis=stored,
            score=score.as_dict() | {"observed": run.observed_hypothesis},
            answered_at=now,
            open_for=None,
        )
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise RoundRefused("This round has been answered already: its answer stays as it was.")
    session.commit()
