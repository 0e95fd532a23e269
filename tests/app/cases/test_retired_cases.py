"""A case the pool retires draws no new attempt (410, nothing stored), while an attempt opened
before it was retired stays in the learner's list, resumes, and runs to its reveal."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from app.cases import service
from app.cases.models import CaseAttempt
from tests.app.cases.test_cases import engine_of, open_case, wait_until_runs_end

RETIRED = "a-quick-sweep"


def open_before_retirement(client: TestClient, monkeypatch: pytest.MonkeyPatch, key: str) -> int:
    """Open a retired case as if it were still offered: an attempt stored before retirement."""
    with monkeypatch.context() as still_offered:
        still_offered.setattr(service, "is_offered", lambda key: True)
        return open_case(client, key)


def stored_attempts(client: TestClient) -> list[CaseAttempt]:
    with Session(engine_of(client)) as session:
        return list(session.exec(select(CaseAttempt)).all())


def test_a_retired_case_is_not_listed_and_draws_nothing(client: TestClient) -> None:
    listing = client.get("/cases")
    assert listing.status_code == 200
    assert f'id="case-{RETIRED}"' not in listing.text
    assert 'id="case-a-sweep-before-a-long-run"' in listing.text

    refused = client.post(f"/cases/{RETIRED}/attempts", follow_redirects=False)
    assert refused.status_code == 410
    assert "no longer offered" in refused.text
    assert stored_attempts(client) == []
    # An old key that led to it is refused the same way, not drawn under the old name.
    assert client.post("/cases/every-curve-blows-up/attempts").status_code == 410
    assert stored_attempts(client) == []


def test_an_attempt_opened_before_the_case_was_retired_goes_on(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    case_attempt_id = open_before_retirement(client, monkeypatch, RETIRED)
    wait_until_runs_end(client, case_attempt_id)

    listing = client.get("/cases")
    card = listing.text.split(f'id="case-{RETIRED}"', 1)[1].split("</li>", 1)[0]
    assert "no longer offered" in card and "Continue" in card
    # Pressing Continue resumes the open attempt; it does not draw a new one.
    resumed = client.post(f"/cases/{RETIRED}/attempts", follow_redirects=False)
    assert resumed.status_code == 303
    assert resumed.headers["location"] == f"/cases/attempts/{case_attempt_id}"
    assert len(stored_attempts(client)) == 1

    page = client.get(f"/cases/attempts/{case_attempt_id}")
    assert page.status_code == 200
    assert "A sweep with no rate to use" in page.text
