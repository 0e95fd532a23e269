"""Spaced review from code: a check the learner's edited exercise code failed becomes a review
item (one per exercise and check), due a day later; it sends the learner back to the exercise's
starter, and their next judged run of it grades the item (a pass Good, a fail Again)."""

from datetime import timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlmodel import Session, col, select

from app.exercises.models import ExerciseRun
from app.practice.misses import note_code_miss
from app.practice.models import ReviewCard, ReviewLogEntry
from app.runs import lifecycle
from app.runs.models import Attempt, AttemptStatus
from tests.app.clock import MONDAY, Clock
from tests.app.factories import EXERCISE, add_exercise_run, engine_of
from tests.app.practice.test_practice import ready_keys

EDITED = "--- starter.py\n+++ your code\n+# edited\n"
KEY = f"code-miss:{EXERCISE}:fits-2"


def record(status: str, *failed: str) -> dict[str, Any]:
    checks = [{"key": "fits-1", "title": "One", "status": "pass"}]
    checks += [{"key": key, "title": key, "status": "fail", "message": "not yet"} for key in failed]
    return {"status": "succeeded", "exercise": {"status": status, "checks": checks}}


def me(client: TestClient) -> int:
    return int(client.get("/api/session").json()["user_id"])


def code_cards(client: TestClient) -> list[ReviewCard]:
    with Session(engine_of(client)) as session:
        return list(
            session.exec(
                select(ReviewCard)
                .where(col(ReviewCard.item_key).startswith("code-miss:"))
                .order_by(col(ReviewCard.item_key))
            ).all()
        )


def end_exercise_run(client: TestClient, ended: dict[str, Any], *, diff: str = EDITED) -> int:
    """An exercise run ended the one way runs end (lifecycle.end_run, with every hook)."""
    engine = engine_of(client)
    attempt_id = add_exercise_run(engine, me(client), judgement="failed", diff=diff)
    with Session(engine) as session:
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None
        attempt.status, attempt.finished_at = AttemptStatus.running, None
        session.add(attempt)
        session.commit()
        locked = lifecycle.lock_unended(session, attempt_id)
        assert locked is not None
        lifecycle.end_run(session, locked, record=ended)
        session.commit()
    return attempt_id


def test_only_failed_checks_of_edited_code_become_items(client: TestClient) -> None:
    """The hook itself, on stored rows: a check that errored or passed makes no item, nor does
    a run that ended without a record, nor the starter run as given (an empty diff)."""
    engine = engine_of(client)
    attempt_id = add_exercise_run(engine, me(client))
    checks = [
        {"key": "fits-1", "status": "pass"},
        {"key": "fits-2", "status": "fail"},
        {"key": "fits-5", "status": "error"},
        {"key": "fits-2", "status": "fail"},  # named twice: one item
    ]
    ended = {"exercise": {"status": "failed", "checks": checks}}
    with Session(engine) as session:
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None
        now = MONDAY
        note_code_miss(session, attempt, ended, now=now)  # the factory's diff is empty
        session.commit()
        assert code_cards(client) == []
        run = session.exec(select(ExerciseRun).where(ExerciseRun.attempt_id == attempt_id)).one()
        run.diff = EDITED
        session.add(run)
        note_code_miss(session, attempt, None, now=now)  # ended without a record
        note_code_miss(session, attempt, ended, now=now)
        note_code_miss(session, attempt, ended, now=now)  # again: still one item
        session.commit()
    cards = code_cards(client)
    assert [card.item_key for card in cards] == [KEY]
    assert cards[0].source == "code_miss" and cards[0].attempt_id == attempt_id


def test_the_item_comes_back_a_day_later_and_sends_the_learner_to_the_starter(
    client: TestClient, clock: Clock
) -> None:
    first = end_exercise_run(client, record("failed", "fits-2"))
    (card,) = code_cards(client)
    assert card.item_key == KEY and card.reviews == 0
    clock.now = card.due_at - timedelta(minutes=1)
    assert KEY not in ready_keys(client)
    clock.now = card.due_at + timedelta(minutes=1)
    assert KEY in ready_keys(client)
    page = client.get(f"/practice/{KEY}").text
    assert f'href="/exercises/{EXERCISE}?fresh=1"' in page
    # The page asks before it answers: no model answer, no evidence link yet.
    assert f"/exercises/{EXERCISE}/runs/{first}" not in page
    assert 'id="practice-rating"' not in page and 'name="answer"' not in page
    # The editor opens on the starter, not the learner's last code ("# edited").
    assert "# edited" in client.get(f"/exercises/{EXERCISE}").text
    assert "# edited" not in client.get(f"/exercises/{EXERCISE}?fresh=1").text
    # Nobody rates it by hand: the judge grades it.
    token = client.headers["X-CSRF-Token"]
    refused = client.post(
        f"/practice/{KEY}/rating",
        data={"answer": "done", "rating": "easy", "seen_reviews": "0", "csrf_token": token},
    )
    assert refused.status_code == 422
    assert code_cards(client)[0].reviews == 0


def test_a_run_grades_the_due_items_of_its_exercise(client: TestClient) -> None:
    """A fail grades a due item Again, a pass Good; an item not yet due, a run of another
    verdict (the harness failed) and a new miss in the same run are not graded."""
    end_exercise_run(client, record("failed", "fits-2"))
    end_exercise_run(client, record("passed"))  # not due yet: nothing graded
    assert code_cards(client)[0].reviews == 0
    with Session(engine_of(client)) as session:
        card = session.exec(select(ReviewCard).where(ReviewCard.item_key == KEY)).one()
        card.due_at = card.created_at - timedelta(days=1)  # as if a day had passed
        session.add(card)
        session.commit()
    end_exercise_run(client, record("error"))
    assert code_cards(client)[0].reviews == 0
    end_exercise_run(client, record("failed", "fits-2", "fits-5"))
    after_fail = {card.item_key: card for card in code_cards(client)}
    assert after_fail[KEY].reviews == 1
    assert after_fail[f"code-miss:{EXERCISE}:fits-5"].reviews == 0  # new: due tomorrow
    with Session(engine_of(client)) as session:
        card = session.exec(select(ReviewCard).where(ReviewCard.item_key == KEY)).one()
        card.due_at = card.created_at - timedelta(days=1)
        session.add(card)
        session.commit()
    end_exercise_run(client, record("passed"))
    with Session(engine_of(client)) as session:
        ratings = session.exec(
            select(ReviewLogEntry.rating)
            .where(ReviewLogEntry.item_key == KEY)
            .order_by(col(ReviewLogEntry.id))
        ).all()
        card = session.exec(select(ReviewCard).where(ReviewCard.item_key == KEY)).one()
    assert list(ratings) == ["again", "good"]
    assert card.reviews == 2 and card.schedule is not None


def test_the_starter_run_as_given_makes_no_item(client: TestClient) -> None:
    end_exercise_run(client, record("failed", "fits-2"), diff="")
    assert code_cards(client) == []
