"""Server-rendered pages: the catalogue, the drill page, running from the form, the attempt page."""

import re
from typing import Any

from fastapi.testclient import TestClient
from sqlmodel import Session, func, select

from app.runs.models import Attempt, Explanation
from tests.app.factories import add_unfinished_attempt
from tests.conftest import wait_until_final

HTMX = {"HX-Request": "true"}
HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def form(**overrides: str) -> dict[str, str]:
    fields = {
        "hypothesis": "fits",
        "prediction": "The loss reaches about zero.",
        "knob.examples": "8",
        "knob.bug": "none",
        "knob.lr": "0.01",
        "knob.steps": "40",
        "seed": "0",
    }
    return fields | overrides


def count(client: TestClient, model: Any) -> int:
    with Session(client.app.state.engine) as session:  # type: ignore[attr-defined]
        return session.exec(select(func.count()).select_from(model)).one()


def test_the_catalogue_links_every_drill(client: TestClient) -> None:
    page = client.get("/").text
    assert 'href="/drills/overfit-one-batch"' in page and "Overfit a single batch" in page
    # Every script and stylesheet comes from this server (a random CSRF token in the page may
    # happen to contain the letters "cdn": look at the addresses, not the whole text).
    sources = re.findall(r'(?:src|href)="([^"]+)"', page)
    assert sources and all(not re.match(r"(?:https?:)?//", source) for source in sources)
    assert client.get("/static/vendor/htmx.min.js").status_code == 200
    assert client.get("/static/vendor/htmx-ext-sse.min.js").status_code == 200
    assert client.get("/static/vendor/plotly-cartesian.min.js").status_code == 200


def test_the_drill_page_asks_for_a_prediction_before_the_run(client: TestClient) -> None:
    page = client.get("/drills/overfit-one-batch").text
    assert re.search(r'<button id="run-button"[^>]*disabled', page)
    for name in ("hypothesis", "prediction", "knob.examples", "knob.bug", "knob.lr", "knob.steps"):
        assert f'name="{name}"' in page
    assert client.get("/drills/nope").status_code == 404


def test_running_from_the_form_returns_the_live_panel(client: TestClient) -> None:
    response = client.post("/drills/overfit-one-batch/attempts", data=form(), headers=HTMX)
    assert response.status_code == 200
    assert response.headers["HX-Trigger"] == "attempts-changed"
    attempt_id = int(re.search(r'data-attempt="(\d+)"', response.text).group(1))  # type: ignore[union-attr]
    assert f'sse-connect="/api/attempts/{attempt_id}/events?after=' in response.text
    wait_until_final(client, attempt_id)
    final = client.get(f"/attempts/{attempt_id}/panel", headers=HTMX).text
    assert "sse-connect" not in final
    assert 'id="health"' in final and 'id="compare"' in final and 'id="verdict"' in final


def test_a_plain_form_post_redirects_to_the_attempt(client: TestClient) -> None:
    response = client.post(
        "/drills/overfit-one-batch/attempts", data=form(), follow_redirects=False
    )
    assert response.status_code == 303
    assert re.fullmatch(r"/attempts/\d+", response.headers["location"])
    wait_until_final(client, int(response.headers["location"].rsplit("/", 1)[1]))


def test_a_rejected_form_comes_back_with_the_error_and_stores_nothing(client: TestClient) -> None:
    before = count(client, Attempt)
    response = client.post(
        "/drills/overfit-one-batch/attempts", data=form(**{"knob.lr": "-3"}), headers=HTMX
    )
    assert response.status_code == 422
    assert response.headers["HX-Retarget"] == "#attempt-form"
    assert 'id="error-knobs-lr"' in response.text and "lr" in response.text
    missing = client.post("/drills/overfit-one-batch/attempts", data=form(prediction=""))
    assert missing.status_code == 422 and 'id="error-prediction"' in missing.text
    assert count(client, Attempt) == before


def test_a_finished_attempt_renders_completely_after_a_reload(client: TestClient) -> None:
    response = client.post(
        "/drills/overfit-one-batch/attempts",
        data=form(**{"knob.bug": "all-padding"}),
        follow_redirects=False,
    )
    attempt_id = int(response.headers["location"].rsplit("/", 1)[1])
    attempt = wait_until_final(client, attempt_id)
    assert attempt["status"] == "failed"
    page = client.get(f"/attempts/{attempt_id}").text
    assert "no supervised targets" in page
    assert attempt["command"] in page
    assert 'id="compare"' in page and 'id="explanation"' in page
    history = client.get("/drills/overfit-one-batch/history").text
    assert f'href="/attempts/{attempt_id}"' in history


def test_explain_back_is_saved_and_validated(client: TestClient) -> None:
    response = client.post(
        "/drills/overfit-one-batch/attempts", data=form(), follow_redirects=False
    )
    attempt_id = int(response.headers["location"].rsplit("/", 1)[1])
    wait_until_final(client, attempt_id)
    url = f"/attempts/{attempt_id}/explanation"
    incomplete = client.post(url, data={"mechanism": "it memorised"}, headers=HTMX)
    assert incomplete.status_code == 422 and "required" in incomplete.text
    assert count(client, Explanation) == 0
    texts = {
        "mechanism": "A working loop memorises eight examples.",
        "right_tool": "Before a long run.",
        "wrong_tool": "To judge generalisation.",
        "next_check": "Shapes of the targets.",
    }
    saved = client.post(url, data=texts, headers=HTMX)
    assert saved.status_code == 200 and "Before a long run." in saved.text
    assert count(client, Explanation) == 1


def test_user_text_is_escaped(client: TestClient) -> None:
    response = client.post(
        "/drills/overfit-one-batch/attempts", data=form(prediction=HOSTILE), follow_redirects=False
    )
    attempt_id = int(response.headers["location"].rsplit("/", 1)[1])
    wait_until_final(client, attempt_id)
    client.post(
        f"/attempts/{attempt_id}/explanation",
        data=dict.fromkeys(("mechanism", "right_tool", "wrong_tool", "next_check"), HOSTILE),
    )
    page = client.get(f"/attempts/{attempt_id}").text
    assert "<script>alert" not in page and "<img src=x" not in page
    assert "&lt;script&gt;alert" in page


def test_a_visitor_is_told_how_to_start(anonymous: TestClient) -> None:
    page = anonymous.get("/").text
    assert 'id="start-here"' in page and 'href="/register"' in page
    # A drill's page may be read before registering; running it may not.
    assert anonymous.get("/drills/overfit-one-batch").status_code == 200
    token = re.search(r'name="csrf_token" value="([^"]+)"', anonymous.get("/login").text)
    assert token
    run = anonymous.post(
        "/drills/overfit-one-batch/attempts",
        data=form(csrf_token=token.group(1)),
        follow_redirects=False,
    )
    assert run.status_code == 303 and run.headers["location"].startswith("/login")
    assert count(anonymous, Attempt) == 0


def test_the_learner_cancels_a_waiting_run_from_its_panel(client: TestClient) -> None:
    app = client.app
    engine = app.state.engine  # type: ignore[attr-defined]
    learner = client.get("/api/session").json()["user_id"]
    scheduler = app.state.runner.scheduler_id  # type: ignore[attr-defined]
    attempt_id = add_unfinished_attempt(engine, learner, scheduler_id=scheduler)
    panel = client.get(f"/attempts/{attempt_id}/panel", headers=HTMX).text
    assert f'hx-post="/attempts/{attempt_id}/cancel"' in panel
    response = client.post(f"/attempts/{attempt_id}/cancel", headers=HTMX)
    assert response.status_code == 200
    assert response.headers["HX-Trigger"] == "attempts-changed"  # the history follows
    assert "status-cancelled" in response.text and "Cancel this run" not in response.text
    assert "before a worker started it" in response.text
    # Pressed again (a second tab): it has ended, and the panel says so.
    again = client.post(f"/attempts/{attempt_id}/cancel", headers=HTMX)
    assert again.status_code == 200 and "status-cancelled" in again.text
    plain = client.post(f"/attempts/{attempt_id}/cancel", follow_redirects=False)
    assert plain.status_code == 409 and "already ended" in plain.text
