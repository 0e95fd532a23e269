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

from sqlalchemy import update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app.attempts import dispatch
from app.case_forms import parse_diagnosis
from app.models import Attempt, DiagnosisRound
from app.runner.dispatcher import AttemptRunner
from drills.cases.contract import CaseSet
from drills.core.command import replay_command
from drills.core.registry import get_drill
from drills.practice.round_answers import case_set_of, score_round
from drills.practice.rounds import REPEAT_AFTER_DAYS, RoundVariant, draw_round, get_variant


class RoundRefused(ValueError):
    """An answer the round cannot take now (409): the message says why."""


def variant_of(diagnosis_round: DiagnosisRound) -> RoundVariant:
    return get_variant(diagnosis_round.variant_key)


def case_set_for(diagnosis_round: DiagnosisRound) -> CaseSet:
    return case_set_of(variant_of(diagnosis_round))


def run_of(session: Session, diagnosis_round: DiagnosisRound) -> Attempt | None:
    return session.exec(select(Attempt).where(Attempt.round_id == diagnosis_round.id)).first()


def is_void(run: Attempt | None) -> bool:
    """A run that ended without a reading (a lost worker, a timeout): nothing to diagnose."""
    return run is None or (run.final and run.observed_hypothesis is None)


def unanswered_round(session: Session, *, learner_id: int) -> DiagnosisRound | None:
    """The learner's newest round still waiting for an answer, unless its run came to nothing."""
    found = session.exec(
        select(DiagnosisRound, Attempt)
        .join(Attempt, col(Attempt.round_id) == col(DiagnosisRound.id))
        .where(DiagnosisRound.learner_id == learner_id, col(DiagnosisRound.answered_at).is_(None))
        .order_by(col(DiagnosisRound.id).desc())
    ).first()
    if found is None or is_void(found[1]):
        return None
    return found[0]


def recent_variants(session: Session, *, learner_id: int, today: date) -> set[str]:
    since = today - timedelta(days=REPEAT_AFTER_DAYS - 1)
    return set(
        session.exec(
            select(DiagnosisRound.variant_key).where(
                DiagnosisRound.learner_id == learner_id, col(DiagnosisRound.day) >= since
            )
        ).all()
    )


def start_round(
    session: Session, runner: AttemptRunner, *, learner_id: int, now: datetime
) -> DiagnosisRound:
    """The learner's unanswered round, or a new draw with its run dispatched. The round and its
    run are stored in one transaction; two presses at once store one round (the second meets
    the unique number of the day and is given the first's)."""
    existing = unanswered_round(session, learner_id=learner_id)
    if existing is not None:
        return existing
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
    drawn = draw_round(learner_id, today, int(number), recent)
    drill = get_drill(drawn.variant.drill)
    diagnosis_round = DiagnosisRound(
        learner_id=learner_id,
        day=today,
        number=int(number),
        variant_key=drawn.variant.key,
        drill_slug=drill.slug,
        seed=drawn.seed,
        knobs=drawn.knobs,
        created_at=now,
    )
    try:
        session.add(diagnosis_round)
        session.flush()
        run = Attempt(
            learner_id=learner_id,
            drill_slug=drill.slug,
            drill_version=drill.version,
            hypothesis="",
            prediction_text="",
            knobs=drawn.knobs,
            seed=drawn.seed,
            command=replay_command(drill.slug, drawn.knobs, drawn.seed),
            scheduler_id=runner.scheduler_id,
            round_id=diagnosis_round.id,
        )
        session.add(run)
        session.commit()
    except IntegrityError:
        session.rollback()
        raced = unanswered_round(session, learner_id=learner_id)
        if raced is None:
            raise
        return raced
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
        )
    )
    if done.rowcount != 1:  # type: ignore[attr-defined]
        session.rollback()
        raise RoundRefused("This round has been answered already: its answer stays as it was.")
    session.commit()
