"""Dependencies as Annotated aliases; handlers never open sessions or reach app.state themselves."""

from collections.abc import AsyncIterator
from datetime import datetime
from typing import Annotated

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from fastapi import Depends, HTTPException, Path, Request
from sqlalchemy import Engine
from sqlmodel import Session
from starlette.concurrency import run_in_threadpool

from app.accounts.models import MAX_ROW_ID, Cohort, Role, User
from app.cases.models import CaseAttempt
from app.core.config import Settings
from app.grading.models import Submission
from app.models.time import utcnow
from app.practice.round_models import DiagnosisRound
from app.runner.dispatcher import AttemptRunner
from app.runs.broker import AttemptEventBroker
from app.runs.models import Attempt
from app.security.login_sessions import user_of
from app.security.throttle import LoginThrottle
from app.web.access import can_manage_cohort, can_read_work_of
from drills.core.contract import Drill
from drills.core.registry import UnknownDrill, get_drill
from drills.practice.rounds import known_variant_keys


class LoginRequired(Exception):
    """Raised by dependencies; answered with 401 on the API and a redirect to /login on pages."""


# Dependencies that only read the app's state are `async def`: FastAPI runs each plain `def`
# dependency in the thread pool, a hand-off per dependency per request (about a millisecond of
# the web process's CPU per run, measured under load); those touching the database stay `def`.


async def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


async def get_engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


async def get_session(request: Request) -> AsyncIterator[Session]:
    # Async, so it costs no hand-off to the thread pool on the way in (opening a Session touches
    # no database), nor on the way out when no transaction is open (an event stream closes its
    # session before it streams). Ending an open one talks to the database (a rollback), so that
    # is done in the pool, as a plain `def` dependency would.
    session = Session(request.app.state.engine)
    try:
        yield session
    finally:
        if session.in_transaction():
            await run_in_threadpool(session.close)
        else:
            session.close()


async def get_runner(request: Request) -> AttemptRunner:
    runner: AttemptRunner = request.app.state.runner
    return runner


async def get_broker(request: Request) -> AttemptEventBroker:
    broker: AttemptEventBroker = request.app.state.broker
    return broker


async def get_throttle(request: Request) -> LoginThrottle:
    throttle: LoginThrottle = request.app.state.login_throttle
    return throttle


async def get_signing_key(request: Request) -> Ed25519PrivateKey:
    key: Ed25519PrivateKey = request.app.state.signing_key
    return key


async def get_now() -> datetime:
    """The clock, as a dependency: tests of what falls due over days override it."""
    return utcnow()


SettingsDep = Annotated[Settings, Depends(get_settings)]
NowDep = Annotated[datetime, Depends(get_now)]
EngineDep = Annotated[Engine, Depends(get_engine)]
SessionDep = Annotated[Session, Depends(get_session)]
RunnerDep = Annotated[AttemptRunner, Depends(get_runner)]
BrokerDep = Annotated[AttemptEventBroker, Depends(get_broker)]
ThrottleDep = Annotated[LoginThrottle, Depends(get_throttle)]
SigningKeyDep = Annotated[Ed25519PrivateKey, Depends(get_signing_key)]


def optional_user(request: Request, session: SessionDep) -> User | None:
    token = request.session.get("login")
    user = user_of(session, token) if isinstance(token, str) else None
    request.state.user = user  # for templates (the nav bar)
    return user


OptionalUserDep = Annotated[User | None, Depends(optional_user)]


async def current_user(user: OptionalUserDep) -> User:
    if user is None:
        raise LoginRequired()
    return user


CurrentUser = Annotated[User, Depends(current_user)]


async def current_instructor(user: CurrentUser) -> User:
    if user.role not in (Role.instructor, Role.admin):
        raise HTTPException(status_code=403, detail="Only instructors can do this.")
    return user


async def current_admin(user: CurrentUser) -> User:
    if user.role != Role.admin:
        raise HTTPException(status_code=403, detail="Only admins can do this.")
    return user


InstructorDep = Annotated[User, Depends(current_instructor)]
AdminDep = Annotated[User, Depends(current_admin)]


def drill_from_path(slug: str) -> Drill:
    try:
        return get_drill(slug)
    except UnknownDrill:
        raise HTTPException(status_code=404, detail=f"No drill called {slug!r}.") from None


DrillDep = Annotated[Drill, Depends(drill_from_path)]


# Every id in a path: a database row id, so 1 .. 2**63 - 1. Anything else (0, -1, 2**64) is a 422
# that names the parameter, before it reaches the database driver (which overflows past 2**63).
RowId = Annotated[int, Path(ge=1, le=MAX_ROW_ID, description="A record's id")]


def readable_attempt(attempt_id: RowId, session: SessionDep, user: CurrentUser) -> Attempt:
    attempt = session.get(Attempt, attempt_id)
    # Someone else's attempt is reported exactly like a missing one; so is a case's or a round's
    # run, which is read through its own page (its knobs and command name what is hidden).
    if (
        attempt is None
        or not attempt.is_drill_page_run
        or not can_read_work_of(session, user, attempt.learner_id)
    ):
        raise HTTPException(status_code=404, detail=f"No attempt {attempt_id}.")
    return attempt


def own_attempt(
    attempt: Annotated[Attempt, Depends(readable_attempt)], user: CurrentUser
) -> Attempt:
    if attempt.learner_id != user.id:
        raise HTTPException(status_code=403, detail="Only the learner who ran it can change this.")
    return attempt


AttemptDep = Annotated[Attempt, Depends(readable_attempt)]
OwnAttemptDep = Annotated[Attempt, Depends(own_attempt)]


def readable_case_attempt(
    case_attempt_id: RowId, session: SessionDep, user: CurrentUser
) -> CaseAttempt:
    found = session.get(CaseAttempt, case_attempt_id)
    if found is None or not can_read_work_of(session, user, found.learner_id):
        raise HTTPException(status_code=404, detail=f"No case attempt {case_attempt_id}.")
    return found


def own_case_attempt(
    found: Annotated[CaseAttempt, Depends(readable_case_attempt)], user: CurrentUser
) -> CaseAttempt:
    if found.learner_id != user.id:
        raise HTTPException(status_code=403, detail="Only the learner working this case can.")
    return found


CaseAttemptDep = Annotated[CaseAttempt, Depends(readable_case_attempt)]
OwnCaseAttemptDep = Annotated[CaseAttempt, Depends(own_case_attempt)]


def readable_round(round_id: RowId, session: SessionDep, user: CurrentUser) -> DiagnosisRound:
    found = session.get(DiagnosisRound, round_id)
    if found is None or not can_read_work_of(session, user, found.learner_id):
        raise HTTPException(status_code=404, detail=f"No round {round_id}.")
    if found.variant_key not in known_variant_keys():
        # Its record stays (and in the export); its page needs the variant to show anything.
        raise HTTPException(
            status_code=410, detail=f"Round {round_id}'s setup has left the catalogue."
        )
    return found


def own_round(
    found: Annotated[DiagnosisRound, Depends(readable_round)], user: CurrentUser
) -> DiagnosisRound:
    if found.learner_id != user.id:
        raise HTTPException(status_code=403, detail="Only the learner of this round can answer it.")
    return found


RoundDep = Annotated[DiagnosisRound, Depends(readable_round)]
OwnRoundDep = Annotated[DiagnosisRound, Depends(own_round)]


def readable_submission(submission_id: RowId, session: SessionDep, user: CurrentUser) -> Submission:
    submission = session.get(Submission, submission_id)
    if submission is None or not can_read_work_of(session, user, submission.learner_id):
        raise HTTPException(status_code=404, detail=f"No submission {submission_id}.")
    return submission


SubmissionDep = Annotated[Submission, Depends(readable_submission)]


def managed_cohort(cohort_id: RowId, session: SessionDep, user: CurrentUser) -> Cohort:
    cohort = session.get(Cohort, cohort_id)
    if cohort is None or not can_manage_cohort(user, cohort):
        raise HTTPException(status_code=404, detail=f"No cohort {cohort_id}.")
    return cohort


CohortDep = Annotated[Cohort, Depends(managed_cohort)]
