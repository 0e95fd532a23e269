"""Revise and resubmit through the pages: the learner sees the comment and the revise form, the
instructor the revision in the queue and on the page beside the earlier ones; access, a double
submit, a stale review and bad fields each get their status and store nothing."""

import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from app.accounts.models import Role
from app.cases.models import CASE_RUBRIC
from app.grading.revisions import service
from app.grading.revisions.models import DiagnosisRevision
from tests.app.factories import (
    add_case_attempt,
    add_cohort,
    add_round,
    add_user,
    engine_of,
    signed_in,
    snapshot,
)
from tests.app.revision_factories import (
    REVIEW_FORM,
    REVISION_FORM,
    add_case_review,
    add_round_review,
)
from tests.app.test_races import at_once, gated

REVIEW = REVIEW_FORM | {f"comment.{key}": "" for key, _ in CASE_RUBRIC}


@dataclass
class Room:
    app: FastAPI
    engine: Engine
    page: str  # the case attempt's or round's page
    clients: dict[str, TestClient]


@pytest.fixture(params=["case", "round"])
def room(request: pytest.FixtureRequest, anonymous: TestClient) -> Iterator[Room]:
    """Ida's cohort has Lee, Otto's has Bo; Lee's case attempt (or round) was reviewed by Ida,
    who asked for changes."""
    engine = engine_of(anonymous)
    app: FastAPI = anonymous.app  # type: ignore[assignment]
    ida = add_user(engine, "ida", Role.instructor)
    otto = add_user(engine, "otto", Role.instructor)
    lee, bo = add_user(engine, "lee"), add_user(engine, "bo")
    add_cohort(engine, ida, name="Autumn", code="AAAA2222", learners=[lee])
    add_cohort(engine, otto, name="Spring", code="BBBB3333", learners=[bo])
    if request.param == "case":
        row_id, _ = add_case_attempt(engine, lee)
        add_case_review(engine, row_id, ida, decision="changes_requested")
        page = f"/cases/attempts/{row_id}"
    else:
        row_id = add_round(engine, lee)
        add_round_review(engine, row_id, ida, decision="changes_requested")
        page = f"/practice/rounds/{row_id}"
    clients = {name: signed_in(app, name) for name in ("ida", "otto", "lee", "bo")}
    yield Room(app, engine, page, clients)
    for client in clients.values():
        client.close()


def revise(room: Room, number: int, who: str = "lee", **changes: str) -> object:
    form = REVISION_FORM | {"number": str(number)} | changes
    return room.clients[who].post(f"{room.page}/revisions", data=form, follow_redirects=False)


def review(room: Room, number: int, decision: str, who: str = "ida") -> object:
    url = f"{room.page}/revisions/{number}/review"
    form = REVIEW | {"decision": decision}
    return room.clients[who].post(url, data=form, follow_redirects=False)


def stored(room: Room) -> list[tuple[int, str, str | None]]:
    with Session(room.engine) as session:
        rows = session.exec(select(DiagnosisRevision).order_by(col(DiagnosisRevision.number))).all()
        return [(row.number, row.diagnosis["intervention"], row.decision) for row in rows]


def test_the_loop_from_changes_requested_to_accepted(room: Room) -> None:
    lee, ida = room.clients["lee"], room.clients["ida"]
    page = lee.get(room.page).text
    # The learner sees the comment and a form for revision 1; no form for the instructor.
    assert "changes requested" in page and 'id="revise"' in page
    assert 'name="number" value="1"' in page and "Send revision 1 for review" in page
    assert 'id="revise"' not in ida.get(room.page).text
    sent = revise(room, 1, intervention="first try")
    assert sent.status_code == 303 and sent.headers["location"] == f"{room.page}#revisions"  # type: ignore[attr-defined]
    mine = lee.get(room.page).text
    assert "Revision 1" in mine and "first try" in mine and "Waiting for the instructor" in mine
    assert 'id="revise"' not in mine
    # In Ida's queue, and on the page with its review form; Otto sees nothing of it.
    assert f'href="{room.page}#revisions"' in ida.get("/reviews").text
    assert room.page not in room.clients["otto"].get("/reviews").text
    theirs = ida.get(room.page).text
    assert 'id="revision-review"' in theirs and "Review revision 1" in theirs
    assert "The diagnosis as first sent" in theirs and REVISION_FORM["note"] in theirs
    assert review(room, 1, "changes_requested").status_code == 303  # type: ignore[attr-defined]
    # The learner revises again from the words of revision 1; both revisions stay.
    again = lee.get(room.page).text
    assert "Send revision 2 for review" in again and ">first try</textarea>" in again
    assert revise(room, 2, intervention="second try").status_code == 303  # type: ignore[attr-defined]
    decided = review(room, 2, "accepted")
    assert decided.status_code == 303  # type: ignore[attr-defined]
    assert decided.headers["location"] == f"{room.page}#next-in-queue"  # type: ignore[attr-defined]
    assert stored(room) == [(1, "first try", "changes_requested"), (2, "second try", "accepted")]
    final = lee.get(room.page).text
    assert 'id="revise"' not in final
    assert "Review of revision 2: accepted" in final and "Review of revision 1: changes" in final
    assert f'href="{room.page}#revisions"' not in ida.get("/reviews").text
    after = ida.get(room.page).text
    assert 'id="next-in-queue"' in after and 'id="revision-review"' not in after


def test_a_double_submit_stores_one_revision(room: Room) -> None:
    assert revise(room, 1).status_code == 303  # type: ignore[attr-defined]
    twice = revise(room, 1)
    assert twice.status_code == 409  # type: ignore[attr-defined]
    assert "Revision 1 was sent already; this copy was not stored." in twice.text  # type: ignore[attr-defined]
    assert len(stored(room)) == 1


def test_a_stale_review_is_refused_with_the_reason(room: Room) -> None:
    revise(room, 1, intervention="first try")
    review(room, 1, "changes_requested")
    revise(room, 2, intervention="second try")
    before = snapshot(room.engine)
    # Otto cannot see it; Ida's second tab, still on revision 1, is told which one to review.
    assert review(room, 1, "accepted", who="otto").status_code == 404  # type: ignore[attr-defined]
    late = review(room, 1, "accepted")
    assert late.status_code == 409  # type: ignore[attr-defined]
    text = re.sub(r"\s+", " ", late.text)  # type: ignore[attr-defined]
    assert "Revision 1 is no longer the latest" in text and "review revision 2 instead" in text
    again = review(room, 2, "accepted")
    assert again.status_code == 303  # type: ignore[attr-defined]
    twice = review(room, 2, "changes_requested")
    assert twice.status_code == 409 and "already been reviewed" in twice.text  # type: ignore[attr-defined]
    assert review(room, 7, "accepted").status_code == 404  # type: ignore[attr-defined]
    after = snapshot(room.engine)
    assert after.pop("diagnosis_revision") != before.pop("diagnosis_revision")
    assert after == before


def test_only_the_learner_revises_and_only_when_asked(room: Room) -> None:
    before = snapshot(room.engine)
    assert revise(room, 1, who="ida").status_code == 403  # type: ignore[attr-defined]
    assert revise(room, 1, who="bo").status_code == 404  # type: ignore[attr-defined]
    assert revise(room, 1, who="otto").status_code == 404  # type: ignore[attr-defined]
    # A learner cannot review their own revision.
    assert review(room, 1, "accepted", who="lee").status_code == 403  # type: ignore[attr-defined]
    # Bad fields: 422, each named beside its field, the form kept.
    bad = revise(room, 1, intervention="", first_test="nope", note="kept")
    assert bad.status_code == 422  # type: ignore[attr-defined]
    assert "write the fix you expect before you send the revision" in bad.text  # type: ignore[attr-defined]
    assert "pick the first test from the list" in bad.text and ">kept</textarea>" in bad.text  # type: ignore[attr-defined]
    assert snapshot(room.engine) == before
    revise(room, 1)
    review(room, 1, "accepted")
    final = revise(room, 2)
    assert final.status_code == 409 and "accepted this diagnosis" in final.text  # type: ignore[attr-defined]
    assert len(stored(room)) == 1


def test_nothing_to_revise_before_the_first_review(anonymous: TestClient) -> None:
    engine = engine_of(anonymous)
    lee = add_user(engine, "lee")
    case_attempt_id, _ = add_case_attempt(engine, lee)
    client = signed_in(anonymous.app, "lee")  # type: ignore[arg-type]
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert 'id="revisions"' not in page
    refused = client.post(
        f"/cases/attempts/{case_attempt_id}/revisions",
        data=REVISION_FORM | {"number": "1"},
        follow_redirects=False,
    )
    assert refused.status_code == 409 and "has not been reviewed yet" in refused.text
    unanswered = add_round(engine, lee, answered=False, number=2)
    early = client.post(
        f"/practice/rounds/{unanswered}/revisions",
        data=REVISION_FORM | {"number": "1"},
        follow_redirects=False,
    )
    assert early.status_code == 409
    client.close()


RACERS = 3


def test_copies_of_one_revision_sent_at_once_store_one(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three tabs send revision 1 together; each has read the thread (no revision yet) before
    any stores: the unique (attempt, number) keeps one, the others get the 409."""
    tabs = [signed_in(room.app, "lee") for _ in range(RACERS)]
    monkeypatch.setattr(service, "thread_of", gated(service.thread_of, RACERS))
    form = REVISION_FORM | {"number": "1"}
    url = f"{room.page}/revisions"
    answers = at_once(
        [functools.partial(tab.post, url, data=form, follow_redirects=False) for tab in tabs]
    )
    assert sorted(a.status_code for a in answers) == [303] + [409] * (RACERS - 1)
    assert all("was sent already" in a.text for a in answers if a.status_code == 409)
    assert len(stored(room)) == 1


def test_reviews_of_one_revision_sent_at_once_store_one(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    revise(room, 1)
    tabs = [signed_in(room.app, "ida") for _ in range(RACERS)]
    monkeypatch.setattr(service, "thread_of", gated(service.thread_of, RACERS))
    url = f"{room.page}/revisions/1/review"
    decisions = ["accepted", "changes_requested", "changes_requested"]
    answers = at_once(
        [
            functools.partial(
                tab.post, url, data=REVIEW | {"decision": decision}, follow_redirects=False
            )
            for tab, decision in zip(tabs, decisions, strict=True)
        ]
    )
    assert sorted(a.status_code for a in answers) == [303] + [409] * (RACERS - 1)
    assert all("already been reviewed" in a.text for a in answers if a.status_code == 409)
    winner = decisions[[a.status_code for a in answers].index(303)]
    assert stored(room) == [(1, REVISION_FORM["intervention"], winner)]
