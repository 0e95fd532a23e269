"""A learner's share of the workers (app/runs/fair_share.py): a cap on a learner's unfinished runs
that every way of starting one honours (drill API and form, case, experiment, round), counted by
the database even when pressed twice at once; and runs handed out in turn, so one learner's
backlog cannot hold up the others."""

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, col, select

from app.cases.models import CaseStage
from app.core.config import Settings
from app.main import create_app
from app.runs.attempts import runs_ahead
from app.runs.models import Attempt, AttemptStatus
from tests.app.factories import (
    add_case_attempt,
    add_unfinished_attempt,
    add_user,
    engine_of,
    row_counts,
    signed_in,
)
from tests.conftest import log_in, wait_until_final

HTMX = {"HX-Request": "true"}
RUN = {"drill": "overfit-one-batch", "hypothesis": "fits", "prediction": "It fits."}
FORM = {"hypothesis": "fits", "prediction": "It fits.", "knob.steps": "20", "seed": "0"}


def unfinished_of(client: TestClient, learner_id: int) -> list[Attempt]:
    with Session(engine_of(client)) as session:
        return list(
            session.exec(
                select(Attempt).where(
                    col(Attempt.learner_id) == learner_id,
                    col(Attempt.status).in_([AttemptStatus.queued, AttemptStatus.running]),
                )
            ).all()
        )


@pytest.fixture
def lee(make_settings: Callable[..., Settings]) -> Iterator[tuple[TestClient, int]]:
    """An app that lets a learner have two unfinished runs, and its learner "lee" logged in:
    (lee's browser, lee's id)."""
    with TestClient(create_app(make_settings(runs_per_learner=2))) as client:
        learner_id = add_user(engine_of(client), "lee")
        log_in(client, "lee")
        yield client, learner_id


def test_a_learner_at_the_cap_is_refused_everywhere_and_nothing_is_stored(
    lee: tuple[TestClient, int],
) -> None:
    client, learner = lee
    engine = engine_of(client)
    case_attempt_id, _ = add_case_attempt(engine, learner, stage=CaseStage.investigating)
    scheduler = client.app.state.runner.scheduler_id  # type: ignore[attr-defined]
    for _ in range(2):
        add_unfinished_attempt(engine, learner, scheduler_id=scheduler)
    before = row_counts(engine)

    api = client.post("/api/attempts", json=RUN)
    assert api.status_code == 429
    assert "2 runs queued or running" in api.json()["detail"]
    form = client.post("/drills/overfit-one-batch/attempts", data=FORM, headers=HTMX)
    assert form.status_code == 429
    assert 'id="error-run"' in form.text and "2 runs queued or running" in form.text
    assert ">It fits.</textarea>" in form.text  # the form comes back as sent
    opened = client.post("/cases/a-suspicious-checkpoint/attempts", follow_redirects=False)
    assert opened.status_code == 429 and "2 runs queued or running" in opened.text
    started = client.post("/practice/rounds", follow_redirects=False)
    assert started.status_code == 429
    experiment = client.post(
        f"/cases/attempts/{case_attempt_id}/experiments", data={"experiment": "update-sizes"}
    )
    assert experiment.status_code == 429 and "2 runs queued or running" in experiment.text
    assert row_counts(engine) == before

    # Another learner is not held back by lee's share.
    add_user(engine, "ola")
    ola = signed_in(client.app, "ola")  # type: ignore[arg-type]
    created = ola.post("/api/attempts", json=RUN | {"knobs": {"steps": 20}})
    assert created.status_code == 202, created.text
    assert wait_until_final(ola, created.json()["id"])["status"] == "succeeded"


def test_two_presses_for_the_last_place_start_one_run(lee: tuple[TestClient, int]) -> None:
    client, learner = lee
    engine = engine_of(client)
    scheduler = client.app.state.runner.scheduler_id  # type: ignore[attr-defined]
    add_unfinished_attempt(engine, learner, scheduler_id=scheduler)
    barrier = threading.Barrier(2)
    answers: list[Any] = []

    def press() -> None:
        barrier.wait()
        answers.append(client.post("/api/attempts", json=RUN | {"knobs": {"steps": 20}}))

    threads = [threading.Thread(target=press) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(answer.status_code for answer in answers) == [202, 429]
    started = next(answer for answer in answers if answer.status_code == 202)
    wait_until_final(client, started.json()["id"])
    with Session(engine) as session:
        stored = session.exec(select(Attempt).where(col(Attempt.learner_id) == learner)).all()
    assert len(stored) == 2


def test_a_learners_backlog_waits_behind_everyone_elses_first_run(
    make_settings: Callable[..., Settings],
) -> None:
    """Two learners each post four long runs, then a third posts one: it starts right after the
    second learner's first, before the rest of their backlog. (The first four runs on a
    two-worker cluster go straight to the workers: Dask queues runs on the scheduler, in
    priority order, once it holds more than twice as many as the workers have threads.)"""
    app = create_app(make_settings(runs_per_learner=4))
    with TestClient(app) as flo:
        engine = engine_of(flo)
        add_user(engine, "flo")
        log_in(flo, "flo")
        add_user(engine, "gil")
        gil = signed_in(app, "gil")
        add_user(engine, "ola")
        ola = signed_in(app, "ola")
        long_run = RUN | {"knobs": {"steps": 2000}}  # seconds: the workers stay busy
        flos = [flo.post("/api/attempts", json=long_run).json()["id"] for _ in range(4)]
        gils = [gil.post("/api/attempts", json=long_run).json()["id"] for _ in range(4)]
        olas = ola.post("/api/attempts", json=RUN | {"knobs": {"steps": 20}}).json()["id"]
        turns = [attempt.queue_turn for attempt in _attempts(flo, [*flos, *gils, olas])]
        assert turns == [0, 1, 2, 3, 0, 1, 2, 3, 0]
        with Session(engine) as session:
            ahead = {a.id: runs_ahead(session, a) for a in _attempts(flo, [*gils, olas])}
        # Still queued: flo's last three and gil's four, then ola's (each learner's 0, then 1...).
        assert ahead[olas] <= 2 and ahead[gils[1]] > ahead[olas], ahead

        for attempt_id in flos:  # flo gives up: the workers come free
            flo.post(f"/api/attempts/{attempt_id}/cancel")
        assert wait_until_final(ola, olas, timeout=120)["status"] == "succeeded"
        for attempt_id in gils:
            gil.post(f"/api/attempts/{attempt_id}/cancel")
        for owner, ids in ((flo, flos), (gil, gils)):
            for attempt_id in ids:
                wait_until_final(owner, attempt_id, timeout=120)
        ola_started = _attempts(flo, [olas])[0].started_at
        assert ola_started is not None
        later = [a.started_at for a in _attempts(flo, gils[1:]) if a.started_at is not None]
        order = sorted(
            (a.started_at, a.learner_id, a.queue_turn, a.status)
            for a in _attempts(flo, [*flos, *gils, olas])
            if a.started_at is not None
        )
        assert all(ola_started < started for started in later), order


def _attempts(client: TestClient, ids: list[int]) -> list[Attempt]:
    with Session(engine_of(client)) as session:
        found = {a.id: a for a in session.exec(select(Attempt).where(col(Attempt.id).in_(ids)))}
    return [found[i] for i in ids]


def test_runs_ahead_counts_earlier_turns_then_earlier_runs_of_the_same_turn(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings())
    with TestClient(app) as client:
        engine = engine_of(client)
        flo, ola = add_user(engine, "flo"), add_user(engine, "ola")
        scheduler = app.state.runner.scheduler_id
        turns = [(flo, 0), (flo, 1), (flo, 2), (ola, 0), (ola, 1)]
        ids = [
            add_unfinished_attempt(engine, who, scheduler_id=scheduler, queue_turn=turn)
            for who, turn in turns
        ]
        with Session(engine) as session:
            ahead = [runs_ahead(session, attempt) for attempt in _attempts(client, ids)]
        # flo0, ola0 | flo1, ola1 | flo2
        assert ahead == [0, 2, 4, 1, 3]
