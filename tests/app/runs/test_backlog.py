"""The backlog (app/runs/fair_share.py, app/runs/backlog.py): who is over their share of the
workers, what is held back and what is sent, with real runs where it matters: a learner who has
had the workers lately waits while others ran in the window, and is not held back when nobody
else is there."""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, select

from app.core.config import Settings
from app.exercises.models import ExerciseRun
from app.main import create_app
from app.models.time import as_utc
from app.runs.backlog import next_to_send, send
from app.runs.fair_share import held_at_start, shares
from app.runs.housekeeping import ending_for
from app.runs.models import Attempt, AttemptStatus
from tests.app.factories import add_user, engine_of, signed_in
from tests.conftest import log_in, wait_until_final

NOW = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
RUN = {"drill": "overfit-one-batch", "hypothesis": "fits", "prediction": "It fits."}
SETTINGS = Settings(share_window_s=60, queue_timeout_s=600)


def ran(
    engine: Engine,
    learner_id: int,
    *,
    began_s_ago: float,
    ended_s_ago: float | None,
    status: AttemptStatus = AttemptStatus.succeeded,
    scheduler_id: str | None = "scheduler-1",
    turn: int = 0,
) -> int:
    """A run of the learner's that took a worker from `began_s_ago` to `ended_s_ago` (None: still
    running) before NOW; a queued one has not begun (pass status=queued and began_s_ago=0)."""
    started = None if status == AttemptStatus.queued else NOW - timedelta(seconds=began_s_ago)
    attempt = Attempt(
        learner_id=learner_id,
        drill_slug="overfit-one-batch",
        drill_version="1",
        hypothesis="fits",
        prediction_text="",
        knobs={},
        seed=0,
        command="python -m drills run overfit-one-batch --seed 0",
        status=status,
        scheduler_id=scheduler_id,
        queue_turn=turn,
        created_at=NOW - timedelta(seconds=max(began_s_ago, 1)),
        started_at=started,
        finished_at=None if ended_s_ago is None else NOW - timedelta(seconds=ended_s_ago),
    )
    with Session(engine) as session:
        session.add(attempt)
        session.commit()
        assert attempt.id is not None
        return attempt.id


def test_a_learners_use_is_their_runs_worker_seconds_inside_the_window(engine: Engine) -> None:
    flo, ola, old = (add_user(engine, name) for name in ("flo", "ola", "old"))
    ran(engine, flo, began_s_ago=70, ended_s_ago=30)  # 30 s of it inside the window
    ran(engine, flo, began_s_ago=20, ended_s_ago=None, status=AttemptStatus.running)  # 20 s
    ran(engine, ola, began_s_ago=5, ended_s_ago=4)
    ran(engine, old, began_s_ago=300, ended_s_ago=200)  # outside the window: not active
    with Session(engine) as session:
        share = shares(session, window_s=60, workers=2, now=NOW)
    assert share.used_s == pytest.approx({flo: 50.0, ola: 1.0})
    assert share.each_s == pytest.approx(60.0)  # two workers' minute over two learners
    assert share.last_s == pytest.approx({flo: 40.0, ola: 1.0})  # the running one is not done
    assert share.within(ola) and share.within(ola, shares=0.05)  # 1 + 1 < 3
    assert not share.within(flo)  # 50 used and 40 more for a run like the last: past 60
    with Session(engine) as session:
        one_worker = shares(session, window_s=60, workers=1, now=NOW)
    assert not one_worker.within(flo) and not one_worker.may_go(flo)  # 50 >= 30, and ola is in
    assert one_worker.may_go(ola)


def test_nobody_else_active_means_nobody_is_held_back(engine: Engine) -> None:
    flo = add_user(engine, "flo")
    ran(engine, flo, began_s_ago=60, ended_s_ago=None, status=AttemptStatus.running)
    ran(engine, flo, began_s_ago=60, ended_s_ago=None, status=AttemptStatus.running)
    with Session(engine) as session:
        share = shares(session, window_s=60, workers=2, now=NOW)
    assert share.used_s == pytest.approx({flo: 120.0}) and not share.within(flo)
    assert share.may_go(flo)  # holding it back would only leave a worker idle


def test_a_first_run_is_held_past_two_shares_and_a_second_run_always(engine: Engine) -> None:
    flo, ola = add_user(engine, "flo"), add_user(engine, "ola")
    ran(engine, ola, began_s_ago=2, ended_s_ago=1)
    ran(engine, flo, began_s_ago=59, ended_s_ago=1)  # 58 s: share 2 x 60 / 2 = 60

    def held(turn: int) -> bool:
        with Session(engine) as session:
            return held_at_start(
                session, learner_id=flo, turn=turn, window_s=60, workers=2, now=NOW
            )

    assert not held(0) and held(1)
    for _ in range(2):  # 174 s: past two shares (120)
        ran(engine, flo, began_s_ago=59, ended_s_ago=1)
    assert held(0)


def test_held_runs_go_first_to_the_learner_who_used_least_one_each_while_workers_are_free(
    engine: Engine,
) -> None:
    flo, gil, ola, amy = (add_user(engine, name) for name in ("flo", "gil", "ola", "amy"))
    ran(engine, flo, began_s_ago=59, ended_s_ago=1)  # 58 s: over a share of 2 x 60 / 4 = 30
    ran(engine, gil, began_s_ago=20, ended_s_ago=10)  # 10 s
    ran(engine, amy, began_s_ago=3, ended_s_ago=2)  # 1 s, and nothing held
    held = {
        name: [
            ran(engine, who, began_s_ago=0, ended_s_ago=None, status=AttemptStatus.queued,
                scheduler_id=None, turn=turn)
            for turn in (1, 2)
        ]
        for name, who in (("flo", flo), ("gil", gil), ("ola", ola))
    }  # fmt: skip

    def chosen(workers: int) -> list[int]:
        with Session(engine) as session:
            picked = next_to_send(
                session, settings=SETTINGS, workers=workers, scheduler_id="scheduler-1", now=NOW
            )
            return [run.id for run in picked if run.id is not None]

    # ola (0 s) then gil (10 s), each their first held run; flo (58 s) waits.
    assert chosen(workers=2) == [held["ola"][0], held["gil"][0]]
    assert chosen(workers=1) == [held["ola"][0]]
    # A run sent and unfinished takes a worker: none is free.
    ran(engine, amy, began_s_ago=1, ended_s_ago=None, status=AttemptStatus.running)
    assert chosen(workers=1) == []


def test_a_held_run_is_not_lost_to_a_restart_and_says_why_when_it_waited_too_long() -> None:
    held = Attempt(
        learner_id=1,
        drill_slug="overfit-one-batch",
        drill_version="1",
        hypothesis="fits",
        prediction_text="",
        knobs={},
        seed=0,
        command="",
        status=AttemptStatus.queued,
        scheduler_id=None,
        created_at=NOW - timedelta(seconds=10),
    )
    ending = ending_for(held, now=NOW, scheduler_id="new", no_worker_for_s=0, settings=SETTINGS)
    assert ending is None
    held.created_at = NOW - timedelta(seconds=601)
    ending = ending_for(held, now=NOW, scheduler_id="new", no_worker_for_s=0, settings=SETTINGS)
    assert ending is not None and "more than their share" in ending.reason


class SendsRecorded:
    scheduler_id = "scheduler-1"

    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    def submit(self, **sent: Any) -> None:
        self.sent.append(("drill", sent))

    def submit_exercise(self, **sent: Any) -> None:
        self.sent.append(("exercise", sent))


def test_a_held_exercise_run_is_sent_with_the_code_it_stored(engine: Engine) -> None:
    amy = add_user(engine, "amy")
    run_id = ran(
        engine, amy, began_s_ago=0, ended_s_ago=None, status=AttemptStatus.queued,
        scheduler_id=None, turn=1,
    )  # fmt: skip
    with Session(engine) as session:
        run = session.get(Attempt, run_id)
        assert run is not None
        run.exercise_slug = "accumulation-big-batch-step"
        session.add(run)
        session.add(
            ExerciseRun(attempt_id=run_id, exercise_slug=run.exercise_slug, code="x = 1\n",
                        code_sha256="0" * 64, diff="")
        )  # fmt: skip
        session.commit()
        runner = SendsRecorded()
        send(session, runner, run)  # type: ignore[arg-type]
    assert runner.sent == [
        (
            "exercise",
            {
                "attempt_id": run_id,
                "exercise": "accumulation-big-batch-step",
                "code": "x = 1\n",
                "seed": 0,
                "priority": -1,
            },
        )
    ]


def _attempt(client: TestClient, attempt_id: int) -> Attempt:
    with Session(engine_of(client)) as session:
        found = session.exec(select(Attempt).where(Attempt.id == attempt_id)).one()
    return found


def test_a_learner_over_their_share_waits_while_others_run_and_goes_once_back_within_it(
    make_settings: Callable[..., Settings],
) -> None:
    """flo's runs took 45 worker seconds of the last 20 (five of 9 s at once) and ola ran too:
    past two shares of 20 s, flo's next run is held while ola's goes straight to the workers.
    flo's use falls as the window moves on (5 s less every second); once one more run as long as
    the last fits in a share (45 - 5t + 9 < 20), the backlog sends it."""
    app = create_app(make_settings(share_window_s=20))
    with TestClient(app) as flo_client:
        engine = engine_of(flo_client)
        flo, ola = add_user(engine, "flo"), add_user(engine, "ola")
        log_in(flo_client, "flo")
        ola_client = signed_in(app, "ola")
        now = datetime.now(UTC)
        for _ in range(5):
            _ran_before(engine, flo, began=now - timedelta(seconds=9), ended=now)
        _ran_before(engine, ola, began=now - timedelta(seconds=2), ended=now)

        flos = flo_client.post("/api/attempts", json=RUN | {"knobs": {"steps": 20}}).json()["id"]
        olas = ola_client.post("/api/attempts", json=RUN | {"knobs": {"steps": 20}}).json()["id"]
        held, sent = _attempt(flo_client, flos), _attempt(flo_client, olas)
        assert (held.status, held.scheduler_id) == (AttemptStatus.queued, None)
        assert sent.scheduler_id == app.state.runner.scheduler_id

        assert wait_until_final(ola_client, olas)["status"] == "succeeded"
        assert wait_until_final(flo_client, flos, timeout=60)["status"] == "succeeded"
        ran_late = _attempt(flo_client, flos)
        assert ran_late.scheduler_id == app.state.runner.scheduler_id
        assert ran_late.started_at is not None
        waited = as_utc(ran_late.started_at) - now
        assert waited > timedelta(seconds=6), waited  # held until 45 - 5t + 9 < 20


def _ran_before(engine: Engine, learner_id: int, *, began: datetime, ended: datetime) -> None:
    with Session(engine) as session:
        session.add(
            Attempt(
                learner_id=learner_id,
                drill_slug="overfit-one-batch",
                drill_version="1",
                hypothesis="fits",
                prediction_text="",
                knobs={},
                seed=0,
                command="",
                status=AttemptStatus.succeeded,
                scheduler_id="an-earlier-scheduler",
                created_at=began,
                started_at=began,
                finished_at=ended,
            )
        )
        session.commit()
