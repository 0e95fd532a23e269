"""Every fix of every case goes through the routes and the database as the page sends it.

A case's draw is stored as JSON, so its knobs come back with lists where the case set wrote
tuples; a fix computed in-process (as the pool's tests do) can work where the stored one does
not (the lr-sweep fixes answered 500). Here each listed fix is submitted through the verdict
route on a stored draw, and the fix run it starts must hold exactly the knobs the pool's tests
heal with (tests/drills/test_case_pool.py runs those for real); one lr-sweep case then runs to
its reveal on the real cluster.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from app.accounts.models import User
from app.cases.models import CaseAttempt, CaseRun, CaseRunKind
from app.diagnosis.shown import option_of
from app.runs.models import Attempt, AttemptStatus
from drills.cases.contract import Case
from drills.cases.draw import Draw, draw, fix_knobs
from drills.cases.registry import all_cases, get_case
from tests.app.cases.test_cases import case_json, drawn, engine_of, open_case, wait_until_runs_end
from tests.app.cases.test_retired_cases import open_before_retirement
from tests.conftest import log_in, make_user


def as_stored(knobs: dict[str, Any]) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(json.dumps(knobs))
    return loaded


def diagnosis_of(case: Case) -> dict[str, Any]:
    """A diagnosis form any case accepts: the first two causes, the first experiment."""
    return {
        "leading": "cause-1",
        "alternatives": ["cause-2"],
        "first_test": case.case_set.experiments[0].key,
        "intervention": "the listed fix",
        "confirmation": "the run comes back healthy",
    }


@pytest.mark.parametrize("case", all_cases(), ids=lambda case: case.key)
def test_every_listed_fix_goes_through_the_verdict_route(
    client: TestClient, monkeypatch: pytest.MonkeyPatch, case: Case
) -> None:
    """No run is executed here (the pool's tests run the same knobs): the runner keeps what it
    was sent, so each fix gets its own learner and a fresh draw."""
    sent: dict[int, dict[str, Any]] = {}
    runner = client.app.state.runner  # type: ignore[attr-defined]
    engine = engine_of(client)

    def keep(**run: Any) -> None:
        """Keep what was sent, and end the run unrun: the learner's next run (the fix) is then
        their only unfinished one and goes to the runner at once instead of to the backlog."""
        sent[run["attempt_id"]] = run
        with Session(engine) as session:
            attempt = session.get(Attempt, run["attempt_id"])
            assert attempt is not None
            attempt.status, attempt.error = AttemptStatus.failed, "Not run by this test."
            session.add(attempt)
            session.commit()

    monkeypatch.setattr(runner, "submit", keep)
    for index, fix in enumerate(case.case_set.fixes):
        name = f"fixer-{index}"
        make_user(engine, name)
        log_in(client, name)
        case_attempt_id = open_case(client, case.key)
        assert client.post(
            f"/cases/attempts/{case_attempt_id}/diagnosis", data=diagnosis_of(case)
        ).is_success
        verdict = client.post(
            f"/cases/attempts/{case_attempt_id}/verdict",
            data={"cause": "cause-1", "fix": fix.key},
            follow_redirects=False,
        )
        assert verdict.status_code == 303, (fix.key, verdict.status_code, verdict.text[:300])
        with Session(engine) as session:
            stored = session.get(CaseAttempt, case_attempt_id)
            assert stored is not None and stored.stage == "fixing" and stored.fix_key == fix.key
            run = session.exec(
                select(CaseRun).where(
                    CaseRun.case_attempt_id == case_attempt_id, CaseRun.kind == CaseRunKind.fix
                )
            ).one()
            attempt = session.get(Attempt, run.attempt_id)
            assert attempt is not None
            expected = fix_knobs(case, Draw(stored.cause, stored.seed, stored.knobs), fix)
            assert attempt.knobs == as_stored(expected), fix.key
            assert sent[run.attempt_id]["knobs"] == as_stored(expected)
            assert attempt.seed == stored.seed
            learner = session.exec(select(User).where(User.username == name)).one()
            assert learner.id is not None and stored.learner_id == learner.id
            # Drawn with the server's key: not the draw anyone without it would compute.
            key = client.app.state.case_draw_key  # type: ignore[attr-defined]
            keyed = draw(case, learner.id, 1, key=key)
            assert (stored.cause, stored.seed) == (keyed.cause, keyed.seed)
            assert stored.seed != draw(case, learner.id, 1).seed


@pytest.mark.slow
def test_the_right_fix_of_a_sweep_case_heals_through_the_database(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Real runs: an lr-sweep case whose fix swaps a stored list of rates (the one that
    answered 500) is revealed with the fix verified. The case is retired, so this attempt is
    one opened before it was: it still scores and reveals, with no new draw offered."""
    case = get_case("a-quick-sweep")
    case_attempt_id = open_before_retirement(client, monkeypatch, case.key)
    hidden = drawn(client, case_attempt_id)
    assert case.case_set.fix(hidden.fix).change.replace, "this case must test a replacing fix"
    wait_until_runs_end(client, case_attempt_id)
    named = option_of(case.case_set, hidden.key)
    form = diagnosis_of(case) | {"leading": named, "alternatives": []}
    assert client.post(f"/cases/attempts/{case_attempt_id}/diagnosis", data=form).is_success
    verdict = client.post(
        f"/cases/attempts/{case_attempt_id}/verdict",
        data={"cause": named, "fix": hidden.fix},
        follow_redirects=False,
    )
    assert verdict.status_code == 303, verdict.text[:300]
    wait_until_runs_end(client, case_attempt_id, timeout=120)
    body = case_json(client, case_attempt_id)
    assert body["stage"] == "revealed"
    assert body["score"]["cause_named"] and body["score"]["fix_verified"], body["score"]
    revealed = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert "no longer offered" in revealed and "with a new draw" not in revealed
