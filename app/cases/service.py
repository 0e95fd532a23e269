"""A learner working a case: open it (the draw and the symptom run), commit to a diagnosis,
spend the experiment budget, name the cause and try a fix, then see the truth and the score.

Each step checks the stage under a row lock on the case attempt, so two presses of the same
button (or two tabs) cannot spend the budget twice or run two fixes. Every run is an ordinary
Attempt linked to the case attempt; its knobs and command stay hidden until the reveal.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app.cases.forms import parse_verdict
from app.cases.models import DEFAULT_CASE_BUDGET, CaseAttempt, CaseRun, CaseRunKind, CaseStage
from app.cases.records import experiments_run
from app.core.row_locks import lock_row
from app.diagnosis.form import InvalidCaseInput, parse_diagnosis
from app.models.time import utcnow
from app.runner.dispatcher import AttemptRunner
from app.runs import lifecycle
from app.runs.attempts import dispatch
from app.runs.fair_share import take_turn
from app.runs.models import Attempt
from app.web.access import cohorts_joined_by
from drills.cases.contract import Case
from drills.cases.draw import Draw, draw, knobs_for
from drills.cases.registry import get_case, is_offered


class CaseRefused(ValueError):
    """A step the case's stage does not allow now (409): the message says why."""


class CaseNotOffered(ValueError):
    """A new draw of a case the pool has retired (410): attempts already open go on."""


def case_of(case_attempt: CaseAttempt) -> Case:
    return get_case(case_attempt.case_key)


def budget_for(session: Session, learner_id: int) -> int:
    """The experiment budget of the learner's cohorts (the most generous, if several)."""
    budgets = [cohort.case_budget for cohort in cohorts_joined_by(session, learner_id=learner_id)]
    return max(budgets, default=DEFAULT_CASE_BUDGET)


def open_attempt(session: Session, *, learner_id: int, case_key: str) -> CaseAttempt | None:
    """The learner's unfinished attempt at this case, if any."""
    return session.exec(
        select(CaseAttempt)
        .where(
            CaseAttempt.learner_id == learner_id,
            CaseAttempt.case_key == case_key,
            CaseAttempt.stage != CaseStage.revealed,
        )
        .order_by(col(CaseAttempt.number).desc())
    ).first()


def open_case(
    session: Session, runner: AttemptRunner, *, learner_id: int, case: Case, key: bytes
) -> CaseAttempt:
    """Resume the learner's unfinished attempt at `case`, or draw a new one (with the server's
    draw `key`) and start its symptom run; a retired case draws none (CaseNotOffered). Two
    requests at once draw one attempt: the second meets the unique number."""
    existing = open_attempt(session, learner_id=learner_id, case_key=case.key)
    if existing is not None:
        return existing
    if not is_offered(case.key):
        raise CaseNotOffered(
            f"The case “{case.title}” is no longer offered: attempts at it already open go on, "
            "but it draws no new ones. Pick another case from the list."
        )
    done = session.exec(
        select(func.count())
        .select_from(CaseAttempt)
        .where(CaseAttempt.learner_id == learner_id, CaseAttempt.case_key == case.key)
    ).one()
    number = int(done) + 1
    drawn = draw(case, learner_id, number, key=key)
    # The symptom run's turn, taken first: a learner at the cap gets no case attempt either.
    turn = take_turn(session, learner_id=learner_id, limit=runner.runs_per_learner)
    case_attempt = CaseAttempt(
        learner_id=learner_id,
        case_key=case.key,
        number=number,
        cause=drawn.cause,
        seed=drawn.seed,
        knobs=drawn.knobs,
        budget=budget_for(session, learner_id),
    )
    session.add(case_attempt)
    try:
        session.flush()
    except IntegrityError:
        session.rollback()
        raced = open_attempt(session, learner_id=learner_id, case_key=case.key)
        if raced is None:
            raise
        return raced
    # Stored with its symptom run in one transaction: never a case attempt without its run.
    _start_run(session, runner, case_attempt, case, drawn.knobs, CaseRunKind.symptom, None, turn)
    session.refresh(case_attempt)
    return case_attempt


def _start_run(
    session: Session,
    runner: AttemptRunner,
    case_attempt: CaseAttempt,
    case: Case,
    knobs: Mapping[str, object],
    kind: CaseRunKind,
    experiment_key: str | None,
    turn: int | None = None,
) -> Attempt:
    """Store the run and its link in one transaction, then dispatch it. `turn`: the run's
    queue turn if the caller took it already (app/runs/fair_share.py)."""
    attempt = lifecycle.new_run(
        session,
        runner,
        learner_id=case_attempt.learner_id,
        drill=case.case_set.drill_object,
        knobs=knobs,
        seed=case_attempt.seed,
        turn=turn,
        case_attempt_id=case_attempt.id,
    )
    session.flush()
    assert attempt.id is not None and case_attempt.id is not None
    session.add(
        CaseRun(
            case_attempt_id=case_attempt.id,
            attempt_id=attempt.id,
            kind=kind,
            experiment_key=experiment_key,
        )
    )
    session.commit()
    session.refresh(attempt)
    dispatch(session, runner, attempt)
    return attempt


def lock(session: Session, case_attempt_id: int) -> CaseAttempt:
    found = lock_row(session, CaseAttempt, case_attempt_id)
    assert found is not None
    return found


# -- the diagnosis ------------------------------------------------------------------------------
def record_diagnosis(
    session: Session, case_attempt: CaseAttempt, fields: Mapping[str, object]
) -> CaseAttempt:
    """Store the diagnosis. It may be rewritten until the first experiment (or the verdict)
    starts; after that it is the record of what the learner thought before any test."""
    diagnosis = parse_diagnosis(case_of(case_attempt).case_set, fields)
    assert case_attempt.id is not None
    locked = lock(session, case_attempt.id)
    if locked.stage not in (CaseStage.diagnosing, CaseStage.investigating) or experiments_run(
        session, case_attempt.id
    ):
        session.rollback()
        raise CaseRefused("the diagnosis is kept as it was once the first experiment started")
    locked.diagnosis = {
        "leading": diagnosis.leading,
        "alternatives": list(diagnosis.alternatives),
        "first_test": diagnosis.first_test,
        "intervention": diagnosis.intervention,
        "confirmation": diagnosis.confirmation,
    }
    locked.diagnosed_at = utcnow()
    locked.stage = CaseStage.investigating
    session.add(locked)
    session.commit()
    session.refresh(locked)
    return locked


# -- experiments --------------------------------------------------------------------------------
def run_experiment(
    session: Session, runner: AttemptRunner, case_attempt: CaseAttempt, experiment_key: str
) -> Attempt:
    case = case_of(case_attempt)
    try:
        experiment = case.case_set.experiment(experiment_key)
    except KeyError:
        raise InvalidCaseInput("experiment", "pick one of the case's experiments") from None
    assert case_attempt.id is not None
    locked = lock(session, case_attempt.id)
    spent = experiments_run(session, case_attempt.id)
    refusal = None
    if locked.stage == CaseStage.diagnosing:
        refusal = "record your diagnosis before running an experiment"
    elif locked.stage != CaseStage.investigating:
        refusal = "the verdict is in: no more experiments on this attempt"
    elif experiment_key in spent:
        refusal = "this experiment has run already: its evidence is on the page"
    elif len(spent) >= locked.budget:
        refusal = f"the budget of {locked.budget} experiments is spent: name the cause"
    if refusal:
        session.rollback()
        raise CaseRefused(refusal)
    base = Draw(locked.cause, locked.seed, dict(locked.knobs))
    knobs = knobs_for(case, base, experiment.change)
    return _start_run(session, runner, locked, case, knobs, CaseRunKind.experiment, experiment.key)


# -- verdict, fix and reveal --------------------------------------------------------------------
def submit_verdict(
    session: Session, runner: AttemptRunner, case_attempt: CaseAttempt, fields: Mapping[str, object]
) -> Attempt:
    case = case_of(case_attempt)
    verdict = parse_verdict(case, fields)
    assert case_attempt.id is not None
    locked = lock(session, case_attempt.id)
    if locked.stage == CaseStage.diagnosing:
        session.rollback()
        raise CaseRefused("record your diagnosis first")
    if locked.stage != CaseStage.investigating:
        session.rollback()
        raise CaseRefused("the verdict for this attempt is already in")
    locked.named_cause = verdict.cause
    locked.fix_key = verdict.fix
    locked.verdict_at = utcnow()
    locked.stage = CaseStage.fixing
    session.add(locked)
    base = Draw(locked.cause, locked.seed, dict(locked.knobs))
    knobs = knobs_for(case, base, case.case_set.fix(verdict.fix).change)
    return _start_run(session, runner, locked, case, knobs, CaseRunKind.fix, None)


def case_attempts_of(session: Session, learner_id: int) -> list[CaseAttempt]:
    return list(
        session.exec(
            select(CaseAttempt)
            .where(CaseAttempt.learner_id == learner_id)
            .order_by(col(CaseAttempt.id))
        ).all()
    )
