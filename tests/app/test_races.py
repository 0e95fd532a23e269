"""Simultaneous requests for one decision: exactly one is stored, the others get a clear 409 (or
the 422 of a taken username), never a 500.

The threaded tests make the race certain rather than likely: a gate holds every request just
after it has passed the application's own check (the status or name look-up) until all of them
have, so each then reaches the database believing it is first, and only the unique constraint
decides. The deterministic tests below them take the same path without threads.
"""

import functools
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, func, select

from app.accounts import service as accounts
from app.accounts.models import Role, User
from app.accounts.service import AccountError, create_user
from app.grading import routes as reviews
from app.grading import submissions
from app.grading.models import Review, Submission
from app.web.access import can_review_work_of
from drills.core.registry import get_drill
from tests.app.factories import (
    DRILL,
    EXPLANATION_FIELDS,
    RUBRIC_KEYS,
    add_attempt,
    add_cohort,
    add_submission,
    add_user,
    engine_of,
    signed_in,
    visitor,
)
from tests.conftest import PASSWORD

RACERS = 3
REVIEW = {f"score.{key}": "2" for key in RUBRIC_KEYS} | {"decision": "accepted"}
TEXTS = dict.fromkeys(EXPLANATION_FIELDS, "The labels were shuffled every step.")


def gated(original: Callable[..., Any], parties: int) -> Callable[..., Any]:
    """`original`, except that its first `parties` calls wait for one another after running."""
    barrier = threading.Barrier(parties)
    lock = threading.Lock()
    calls = 0

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        result = original(*args, **kwargs)
        with lock:
            calls += 1
            waits = calls <= parties
        if waits:
            barrier.wait(timeout=30)
        return result

    return wrapper


def at_once(requests: list[Callable[[], Any]]) -> list[Any]:
    with ThreadPoolExecutor(max_workers=len(requests)) as pool:
        futures = [pool.submit(send) for send in requests]
        return [future.result(timeout=60) for future in futures]


def count(engine: Engine, model: Any, *where: Any) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(model).where(*where)).one()


@dataclass
class Room:
    app: FastAPI
    engine: Engine
    instructor_id: int
    learner_id: int
    failed_id: int
    fixed_id: int


@pytest.fixture
def room(anonymous: TestClient) -> Iterator[Room]:
    """An instructor's cohort with one learner, who has a failed and a fixed run."""
    engine = engine_of(anonymous)
    instructor_id = add_user(engine, "ida", Role.instructor)
    learner_id = add_user(engine, "lee")
    add_cohort(engine, instructor_id, name="Autumn", code="ABCDEFGH", learners=[learner_id])
    failed_id = add_attempt(engine, learner_id, fixed=False)
    fixed_id = add_attempt(engine, learner_id, fixed=True)
    yield Room(anonymous.app, engine, instructor_id, learner_id, failed_id, fixed_id)  # type: ignore[arg-type]


def test_simultaneous_reviews_of_one_version_store_one(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    submission_id = add_submission(room.engine, room.learner_id, room.failed_id, room.fixed_id)
    # The same instructor posting from several tabs at once.
    tabs = [signed_in(room.app, "ida") for _ in range(RACERS)]
    monkeypatch.setattr(reviews, "can_review_work_of", gated(can_review_work_of, RACERS))
    url = f"/submissions/{submission_id}/reviews"
    answers = at_once(
        [functools.partial(tab.post, url, data=REVIEW, follow_redirects=False) for tab in tabs]
    )
    assert sorted(a.status_code for a in answers) == [303] + [409] * (RACERS - 1)
    assert all("already been reviewed" in a.text for a in answers if a.status_code == 409)
    assert count(room.engine, Review) == 1
    with Session(room.engine) as session:
        assert session.get(Submission, submission_id).status == "accepted"  # type: ignore[union-attr]


def test_simultaneous_submissions_of_one_version_store_one(
    room: Room, monkeypatch: pytest.MonkeyPatch
) -> None:
    tabs = [signed_in(room.app, "lee") for _ in range(RACERS)]
    monkeypatch.setattr(submissions, "history", gated(submissions.history, RACERS))
    data = {"failed_attempt_id": room.failed_id, "fixed_attempt_id": room.fixed_id, **TEXTS}
    url = f"/drills/{DRILL}/submissions"
    answers = at_once(
        [functools.partial(tab.post, url, data=data, follow_redirects=False) for tab in tabs]
    )
    assert sorted(a.status_code for a in answers) == [303] + [409] * (RACERS - 1)
    assert all("just submitted" in a.text for a in answers if a.status_code == 409)
    assert count(room.engine, Submission) == 1


def test_simultaneous_registrations_of_one_name_store_one(
    anonymous: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    browsers = [visitor(anonymous.app) for _ in range(RACERS)]  # type: ignore[arg-type]
    monkeypatch.setattr(accounts, "find_user", gated(accounts.find_user, RACERS))
    form = {"username": "sam", "password": PASSWORD, "password_again": PASSWORD}
    answers = at_once(
        [
            functools.partial(browser.post, "/register", data=form, follow_redirects=False)
            for browser in browsers
        ]
    )
    assert sorted(a.status_code for a in answers) == [303] + [422] * (RACERS - 1)
    assert all(
        "the username &#39;sam&#39; is taken" in a.text for a in answers if a.status_code == 422
    )
    assert count(engine_of(anonymous), User, User.username == "sam") == 1


# -- the same paths, deterministically ----------------------------------------------------------
def test_a_review_stored_after_the_status_check_is_a_conflict(engine: Engine) -> None:
    instructor_id = add_user(engine, "ida", Role.instructor)
    learner_id = add_user(engine, "lee")
    submission_id = add_submission(
        engine,
        learner_id,
        add_attempt(engine, learner_id, fixed=False),
        add_attempt(engine, learner_id, fixed=True),
    )
    fields = dict(REVIEW)
    with Session(engine) as late, Session(engine) as first:
        stale = late.get(Submission, submission_id)  # read while still pending
        reviewer = late.get(User, instructor_id)
        assert stale is not None and reviewer is not None and stale.status == "pending"
        submissions.record_review(
            first,
            submission=first.get(Submission, submission_id),  # type: ignore[arg-type]
            reviewer=first.get(User, instructor_id),  # type: ignore[arg-type]
            fields=fields,
        )
        with pytest.raises(submissions.SubmissionConflict, match="already been reviewed"):
            submissions.record_review(late, submission=stale, reviewer=reviewer, fields=fields)
        # The session was rolled back and is usable; the first decision stands.
        assert late.get(Submission, submission_id).status == "accepted"  # type: ignore[union-attr]
    assert count(engine, Review) == 1


def test_a_submission_stored_after_the_pending_check_is_a_conflict(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    learner_id = add_user(engine, "lee")
    failed_id = add_attempt(engine, learner_id, fixed=False)
    fixed_id = add_attempt(engine, learner_id, fixed=True)
    add_submission(engine, learner_id, failed_id, fixed_id)  # version 1, stored a moment ago
    # The check ran before it was stored: it saw no version yet.
    monkeypatch.setattr(submissions, "history", lambda *_, **__: [])
    request = submissions.SubmissionRequest(str(failed_id), str(fixed_id), TEXTS)
    with Session(engine) as session:
        learner = session.get(User, learner_id)
        assert learner is not None
        with pytest.raises(submissions.SubmissionConflict, match="just submitted"):
            submissions.submit(session, drill=get_drill(DRILL), learner=learner, request=request)
    assert count(engine, Submission) == 1


def test_a_username_taken_after_the_look_up_is_named(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    add_user(engine, "sam")
    monkeypatch.setattr(accounts, "find_user", lambda *_: None)  # looked up before it was taken
    with Session(engine) as session, pytest.raises(AccountError) as refused:
        create_user(session, username="sam", display_name="", password=PASSWORD, role=Role.learner)
    assert refused.value.field == "username" and "taken" in refused.value.message
    assert count(engine, User, User.username == "sam") == 1
