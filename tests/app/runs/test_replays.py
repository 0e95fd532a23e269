"""Replaying a stored command: the comparison rules, and a real replay through a worker."""

import time
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from app.accounts.models import Cohort, CohortMembership, Role, User
from app.runs.replay_models import Replay, ReplayVerdict
from app.runs.replays import compare_metrics
from tests.conftest import PREDICTION, log_in, make_user, wait_until_final

SERIES = {"loss": [[0, 1.0], [1, 0.5], [2, 0.25]], "grad_norm": [[0, 2.0], [1, 1.0], [2, 0.5]]}


def shifted(by: float) -> dict[str, list[list[float]]]:
    return {name: [[s, v * (1 + by)] for s, v in points] for name, points in SERIES.items()}


def test_the_same_digest_is_identical() -> None:
    result = compare_metrics(SERIES, "abc", SERIES, "abc")
    assert result.verdict == ReplayVerdict.identical and result.max_relative_difference == 0.0


def test_last_bit_differences_are_within_tolerance() -> None:
    result = compare_metrics(SERIES, "abc", shifted(3e-7), "def")
    assert result.verdict == ReplayVerdict.within_tolerance
    assert result.max_relative_difference == pytest.approx(3e-7, rel=1e-3)


def test_a_real_difference_is_named() -> None:
    changed = shifted(0.0)
    changed["loss"][2] = [2, 0.3]
    result = compare_metrics(SERIES, "abc", changed, "def")
    assert result.verdict == ReplayVerdict.differs
    assert result.first_difference is not None and result.first_difference.startswith(
        "loss at step 2"
    )


def test_missing_metrics_or_steps_differ() -> None:
    assert (
        compare_metrics(SERIES, "a", {"loss": SERIES["loss"]}, "b").verdict == ReplayVerdict.differs
    )
    fewer = {name: points[:2] for name, points in SERIES.items()}
    assert compare_metrics(SERIES, "a", fewer, "b").verdict == ReplayVerdict.differs
    assert compare_metrics({}, None, SERIES, "b").verdict == ReplayVerdict.not_comparable


def wait_for_replay(engine: Any, replay_id: int, timeout: float = 60) -> Replay:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with Session(engine) as session:
            replay = session.get(Replay, replay_id)
            assert replay is not None
            if replay.status != "queued":
                return replay
        time.sleep(0.1)
    raise AssertionError("replay never finished")


def test_an_instructor_replays_a_fresh_attempt_and_it_matches(client: TestClient) -> None:
    app = client.app
    engine = app.state.engine  # type: ignore[attr-defined]
    created = client.post(
        "/api/attempts",
        json={"drill": "overfit-one-batch", **PREDICTION, "knobs": {"steps": 80}, "seed": 5},
    ).json()
    attempt = wait_until_final(client, created["id"])

    # The learner cannot replay (and so cannot vouch for) their own run.
    assert client.post(f"/attempts/{attempt['id']}/replays").status_code == 403

    teacher = make_user(engine, "ida", Role.instructor)
    with Session(engine) as session:
        cohort = Cohort(name="C", join_code="REPLAYME", instructor_id=teacher.saved_id)
        session.add(cohort)
        session.commit()
        learner = session.exec(select(User).where(User.username == "learner-a")).one()
        assert cohort.id is not None  # saved above
        session.add(CohortMembership(cohort_id=cohort.id, learner_id=learner.saved_id))
        session.commit()
    instructor = TestClient(app)
    log_in(instructor, "ida")
    response = instructor.post(f"/attempts/{attempt['id']}/replays", headers={"HX-Request": "true"})
    assert response.status_code == 200 and 'id="replays"' in response.text
    with Session(engine) as session:
        (replay_id,) = [replay.id for replay in session.exec(select(Replay)).all()]
    assert replay_id is not None
    replay = wait_for_replay(engine, replay_id)
    assert replay.status == "finished", replay.error
    assert replay.verdict == ReplayVerdict.identical
    assert replay.digest == attempt["digest"]
    page = instructor.get(f"/attempts/{attempt['id']}").text
    assert "identical: same digest, same numbers" in page
