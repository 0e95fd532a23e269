"""Hidden-bug runs (issue 27, point 9): "Hide the bug from me" on a drill's page draws the
setup, the learner predicts without it, and every answer withholds the knobs, seed and replay
command until the run has ended; the study path counts only these runs."""

import re

from fastapi.testclient import TestClient
from sqlmodel import Session, col, select

from app.models.time import utcnow
from app.runs.models import Attempt, AttemptStatus
from drills.practice.hidden_setups import draw_hidden_setup
from tests.app.factories import engine_of
from tests.conftest import wait_until_final

HTMX = {"HX-Request": "true"}
SLUG = "overfit-one-batch"
RUN_URL = f"/drills/{SLUG}/attempts"
# A setup of the learner's own that no drawn setup uses (steps=7): it must not be the one run.
FORM = {
    "hypothesis": "fits",
    "prediction": "It fits.",
    "knob.steps": "7",
    "knob.bug": "none",
    "seed": "12345",
    "hidden_setup": "on",
}


def runs(client: TestClient) -> list[Attempt]:
    with Session(engine_of(client)) as session:
        return list(session.exec(select(Attempt).order_by(col(Attempt.id))).all())


def me(client: TestClient) -> int:
    return int(client.get("/api/session").json()["user_id"])


def key_of(client: TestClient) -> bytes:
    key: bytes = client.app.state.hidden_setup_key  # type: ignore[attr-defined]
    return key


def test_the_drawn_setup_runs_not_the_forms(client: TestClient) -> None:
    first = client.post(RUN_URL, data=FORM, headers=HTMX)
    second = client.post(RUN_URL, data=FORM, headers=HTMX)
    assert first.status_code == second.status_code == 200, first.text
    stored = runs(client)
    assert [run.hidden_setup for run in stored] == [True, True]
    for number, run in enumerate(stored, 1):
        draw = draw_hidden_setup(SLUG, me(client), number, key=key_of(client))
        assert (run.knobs, run.seed) == (draw.knobs, draw.seed)
        assert run.knobs["steps"] != 7 and run.seed != 12345
        assert run.command.startswith(f"python -m drills run {SLUG}")  # replayable
        # The answer to the press names nothing of the setup.
        answer = first if number == 1 else second
        assert run.command not in answer.text and 'id="setup-hidden"' in answer.text
    for run in stored:
        assert run.id is not None
        done = wait_until_final(client, run.id)
        assert done["knobs"] == run.knobs and done["command"] == run.command
    panel = client.get(f"/attempts/{stored[0].id}/panel", headers=HTMX)
    assert 'id="setup-revealed"' in panel.text and stored[0].command in panel.text


def test_nothing_names_the_setup_before_the_run_ends(client: TestClient) -> None:
    engine = engine_of(client)
    with Session(engine) as session:
        running = Attempt(
            learner_id=me(client),
            drill_slug=SLUG,
            drill_version="1",
            hypothesis="fits",
            prediction_text="It fits.",
            knobs={"examples": 8, "bug": "shuffled-labels", "lr": 0.01, "steps": 200},
            seed=424242,
            command=f"python -m drills run {SLUG} --set bug=shuffled-labels --seed 424242",
            # Queued on this app's scheduler, with no worker behind it: the housekeeping leaves
            # it alone for the test's length.
            status=AttemptStatus.queued,
            scheduler_id=client.app.state.runner.scheduler_id,  # type: ignore[attr-defined]
            hidden_setup=True,
        )
        session.add(running)
        session.commit()
        attempt_id = running.id
    secrets = ("shuffled-labels", "424242")
    answers = {
        "page": client.get(f"/attempts/{attempt_id}").text,
        "panel": client.get(f"/attempts/{attempt_id}/panel", headers=HTMX).text,
        "history": client.get(f"/drills/{SLUG}/history").text,
        # The page's own form offers every bug, of course: its list of runs names none.
        "drill page": client.get(f"/drills/{SLUG}").text.split('id="attempt-history"', 1)[1],
        "api": client.get(f"/api/attempts/{attempt_id}").text,
        "export": client.get("/portfolio/export.json").text,
        "html export": client.get("/portfolio/export.html").text,
    }
    for where, text in answers.items():
        for secret in secrets:
            assert secret not in text, (where, secret)
    api = client.get(f"/api/attempts/{attempt_id}").json()
    assert (api["knobs"], api["seed"], api["command"], api["hidden_setup"]) == (
        None,
        None,
        None,
        True,
    )
    # Once it has ended, the setup is on every one of them.
    with Session(engine) as session:
        row = session.get(Attempt, attempt_id)
        assert row is not None
        row.status, row.finished_at = AttemptStatus.succeeded, utcnow()
        session.add(row)
        session.commit()
    assert "bug=shuffled-labels" in client.get(f"/attempts/{attempt_id}").text
    assert client.get(f"/api/attempts/{attempt_id}").json()["seed"] == 424242


def test_the_api_draws_a_hidden_setup_and_refuses_one_chosen_with_it(client: TestClient) -> None:
    body = {"drill": SLUG, "hypothesis": "fits", "prediction": "It fits.", "hidden_setup": True}
    for chosen in ({"knobs": {"steps": 20}}, {"seed": 3}):
        refused = client.post("/api/attempts", json=body | chosen)
        assert refused.status_code == 422, refused.text
        assert "hidden setup is drawn" in refused.text
    assert runs(client) == []
    started = client.post("/api/attempts", json=body)
    assert started.status_code == 202 and started.json()["command"] is None
    (run,) = runs(client)
    assert run.hidden_setup and run.id == started.json()["id"]
    assert run.id is not None  # narrowed for the type checker: it equals the id above
    wait_until_final(client, run.id)


def test_a_double_press_of_a_hidden_run_starts_one(client: TestClient) -> None:
    page = client.get(f"/drills/{SLUG}").text
    match = re.search(r'name="request_key" value="([^"]+)"', page)
    assert match is not None
    pressed = FORM | {"request_key": match.group(1)}
    first = client.post(RUN_URL, data=pressed, headers=HTMX)
    second = client.post(RUN_URL, data=pressed, headers=HTMX)
    assert first.status_code == second.status_code == 200
    (run,) = runs(client)
    assert run.id is not None
    wait_until_final(client, run.id)


def test_a_rejected_hidden_run_keeps_the_choice_and_stores_nothing(client: TestClient) -> None:
    answer = client.post(RUN_URL, data=FORM | {"prediction": ""}, headers=HTMX)
    assert answer.status_code == 422
    assert re.search(r'id="hidden-setup" name="hidden_setup" checked', answer.text)
    assert runs(client) == []
