"""A double submit starts one run (app/runs/attempts.py): the drill form's one-time token, or an API
client's Idempotency-Key, sent again with the same request answers with the run it started,
pressed one after the other or at the same moment."""

import re
import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, col, select

from app.runs import attempts
from app.runs.models import Attempt
from app.web.request_keys import started_by_key
from tests.app.factories import engine_of
from tests.conftest import wait_until_final

HTMX = {"HX-Request": "true"}
FORM = {"hypothesis": "fits", "prediction": "It fits.", "knob.steps": "20", "seed": "0"}
RUN = {"drill": "overfit-one-batch", "hypothesis": "fits", "prediction": "It fits."}
RUN_URL = "/drills/overfit-one-batch/attempts"
TOKEN = re.compile(r'name="request_key" value="([^"]+)"')


def stored_runs(client: TestClient) -> list[Attempt]:
    with Session(engine_of(client)) as session:
        return list(session.exec(select(Attempt).order_by(col(Attempt.id))).all())


def form_token(client: TestClient) -> str:
    match = TOKEN.search(client.get("/drills/overfit-one-batch").text)
    assert match is not None
    return match.group(1)


def attempt_id_of(panel: str) -> int:
    match = re.search(r'id="run-panel"[^>]*data-attempt="(\d+)"', panel)
    assert match is not None, panel
    return int(match.group(1))


def settle(client: TestClient) -> None:
    for attempt in stored_runs(client):
        assert attempt.id is not None
        wait_until_final(client, attempt.id)


def test_each_render_of_the_drill_form_has_its_own_token(client: TestClient) -> None:
    first, second = form_token(client), form_token(client)
    assert first != second and len(first) >= 16


def test_the_same_form_posted_twice_starts_one_run(client: TestClient) -> None:
    token = form_token(client)
    first = client.post(RUN_URL, data=FORM | {"request_key": token}, headers=HTMX)
    second = client.post(RUN_URL, data=FORM | {"request_key": token}, headers=HTMX)
    assert first.status_code == second.status_code == 200, second.text
    assert attempt_id_of(first.text) == attempt_id_of(second.text)
    assert len(stored_runs(client)) == 1
    # Each answer hands the form a fresh token (out of band) for its next run.
    fresh = [TOKEN.search(answer.text) for answer in (first, second)]
    assert all(match and match.group(1) != token for match in fresh)
    assert 'id="request-key"' in first.text and 'hx-swap-oob="true"' in first.text
    # Without htmx the repeat is sent to the same run's page.
    plain = client.post(RUN_URL, data=FORM | {"request_key": token}, follow_redirects=False)
    assert plain.status_code == 303
    assert plain.headers["location"] == f"/attempts/{attempt_id_of(first.text)}"
    assert len(stored_runs(client)) == 1
    settle(client)


def test_two_presses_at_once_start_one_run(client: TestClient) -> None:
    token = form_token(client)
    barrier = threading.Barrier(2)
    answers: list[Any] = []

    def press() -> None:
        barrier.wait(timeout=30)
        answers.append(client.post(RUN_URL, data=FORM | {"request_key": token}, headers=HTMX))

    threads = [threading.Thread(target=press) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert [answer.status_code for answer in answers] == [200, 200]
    assert len({attempt_id_of(answer.text) for answer in answers}) == 1
    assert len(stored_runs(client)) == 1
    settle(client)


def test_a_used_token_sent_with_other_choices_is_a_new_run(client: TestClient) -> None:
    """A page the back button restored still holds a used token: a changed form is a new run."""
    token = form_token(client)
    first = client.post(RUN_URL, data=FORM | {"request_key": token}, headers=HTMX)
    changed = FORM | {"request_key": token, "seed": "1"}
    second = client.post(RUN_URL, data=changed, headers=HTMX)
    assert attempt_id_of(first.text) != attempt_id_of(second.text)
    runs = stored_runs(client)
    assert [run.seed for run in runs] == [0, 1]
    assert [run.request_key for run in runs] == [token, None]
    settle(client)


def test_a_key_stored_between_look_up_and_commit_answers_with_that_run(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The unique (learner, key) backs the lock: a look-up that missed the first run still
    stores no second one."""
    token = form_token(client)
    first = client.post(RUN_URL, data=FORM | {"request_key": token}, headers=HTMX)
    looked_up = started_by_key  # what app.runs.attempts calls, before the patch below
    misses = iter([True])

    def missing_once(session: Session, *, learner_id: int, key: str) -> Attempt | None:
        return None if next(misses, False) else looked_up(session, learner_id=learner_id, key=key)

    monkeypatch.setattr(attempts, "started_by_key", missing_once)
    second = client.post(RUN_URL, data=FORM | {"request_key": token}, headers=HTMX)
    assert second.status_code == 200, second.text
    assert attempt_id_of(second.text) == attempt_id_of(first.text)
    assert len(stored_runs(client)) == 1
    settle(client)


def test_the_api_takes_an_idempotency_key(client: TestClient) -> None:
    body = RUN | {"knobs": {"steps": 20}}
    key = {"Idempotency-Key": "client-run-0001"}
    first = client.post("/api/attempts", json=body, headers=key)
    second = client.post("/api/attempts", json=body, headers=key)
    assert first.status_code == second.status_code == 202, second.text
    assert first.json()["id"] == second.json()["id"]
    unkeyed = client.post("/api/attempts", json=body)
    assert unkeyed.json()["id"] != first.json()["id"]
    assert len(stored_runs(client)) == 2
    bad = client.post("/api/attempts", json=body, headers={"Idempotency-Key": "no spaces"})
    assert bad.status_code == 422
    assert bad.json()["detail"][0]["loc"] == ["header", "idempotency-key"]
    assert len(stored_runs(client)) == 2
    settle(client)
