"""Dependencies as Annotated aliases; handlers never open sessions or reach app.state themselves."""

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, HTTPException, Request
from sqlalchemy import Engine
from sqlmodel import Session

from app.broker import AttemptEventBroker
from app.config import Settings
from app.models import LOCAL_LEARNER_ID, Attempt
from app.runner.dispatcher import AttemptRunner
from drills.base import Drill
from drills.registry import UnknownDrill, get_drill


def get_settings(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    return settings


def get_engine(request: Request) -> Engine:
    engine: Engine = request.app.state.engine
    return engine


def get_session(request: Request) -> Iterator[Session]:
    with Session(request.app.state.engine) as session:
        yield session


def get_runner(request: Request) -> AttemptRunner:
    runner: AttemptRunner = request.app.state.runner
    return runner


def get_broker(request: Request) -> AttemptEventBroker:
    broker: AttemptEventBroker = request.app.state.broker
    return broker


def current_learner_id() -> int:
    # Accounts come later; until then every request acts as the local learner.
    return LOCAL_LEARNER_ID


def drill_from_path(slug: str) -> Drill:
    try:
        return get_drill(slug)
    except UnknownDrill:
        raise HTTPException(status_code=404, detail=f"No drill called {slug!r}.") from None


SettingsDep = Annotated[Settings, Depends(get_settings)]
EngineDep = Annotated[Engine, Depends(get_engine)]
SessionDep = Annotated[Session, Depends(get_session)]
RunnerDep = Annotated[AttemptRunner, Depends(get_runner)]
BrokerDep = Annotated[AttemptEventBroker, Depends(get_broker)]
LearnerIdDep = Annotated[int, Depends(current_learner_id)]
DrillDep = Annotated[Drill, Depends(drill_from_path)]


def own_attempt(attempt_id: int, session: SessionDep, learner_id: LearnerIdDep) -> Attempt:
    attempt = session.get(Attempt, attempt_id)
    # Someone else's attempt is reported exactly like a missing one.
    if attempt is None or attempt.learner_id != learner_id:
        raise HTTPException(status_code=404, detail=f"No attempt {attempt_id}.")
    return attempt


AttemptDep = Annotated[Attempt, Depends(own_attempt)]
