"""Where no sandbox can start (no bubblewrap, user namespaces blocked), code exercises are off:
the server says so once as it starts, the exercise pages say why and offer no Run, and the rest
of the app works."""

import logging
from collections.abc import Callable

import pytest
from fastapi.testclient import TestClient

import app.exercises.views
import app.main
from app.core.config import Settings
from app.main import create_app
from tests.app.factories import add_user, app_of, engine_of, signed_in

REASON = "bwrap is missing (install bubblewrap)"


def test_without_a_sandbox_exercises_say_why_and_nothing_else_changes(
    make_settings: Callable[..., Settings],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    for module in (app.main, app.exercises.views):
        monkeypatch.setattr(module, "sandbox_available", lambda: REASON)
    with caplog.at_level(logging.WARNING, logger="app.main"):
        with TestClient(create_app(make_settings())) as server:
            add_user(engine_of(server), "learner")
            learner = signed_in(app_of(server), "learner")
            slug = learner.get("/api/exercises").json()[0]["slug"]
            page = learner.get(f"/exercises/{slug}").text
            drills = learner.get("/api/drills")
    said = [record.getMessage() for record in caplog.records]
    assert said.count(f"Code exercises are off: {REASON}") == 1
    assert 'id="sandbox-off"' in page and REASON in page
    assert '<button type="submit" class="primary" disabled>Run my code</button>' in page
    assert drills.status_code == 200 and drills.json()
