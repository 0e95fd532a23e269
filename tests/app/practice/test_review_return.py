"""After a rating, the page it leads to says when the rated item is back, from the due date
stored for it: the words for a few distances, then the pages under an injected clock."""

import re
from datetime import datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, select

from app.practice.models import ReviewCard
from app.practice.return_line import back_in_words
from drills.practice.items import all_items
from tests.app.clock import MONDAY, Clock
from tests.app.factories import engine_of, signed_in
from tests.app.practice.test_practice import FIRST, ready_keys, review
from tests.conftest import make_user

SECOND = f"track:{all_items()[1].key}"


@pytest.mark.parametrize(
    ("due", "now", "words"),
    [
        (MONDAY + timedelta(minutes=10), MONDAY, "Back later today (at 09:10 UTC)"),
        (MONDAY + timedelta(days=1), MONDAY, "Back tomorrow (Tue 8 Dec)"),
        # Calendar days, not 24-hour spans: rated late, due early next morning is "tomorrow".
        (MONDAY + timedelta(hours=22), MONDAY + timedelta(hours=14), "Back tomorrow (Tue 8 Dec)"),
        (MONDAY + timedelta(days=4, hours=-8), MONDAY, "Back in 4 days (Fri 11 Dec)"),
        (MONDAY + timedelta(days=30), MONDAY, "Back in 30 days (Wed 6 Jan 2027)"),
        (MONDAY, MONDAY + timedelta(minutes=1), "Due again now"),  # a link visited late
    ],
)
def test_when_an_item_is_back_in_words(due: datetime, now: datetime, words: str) -> None:
    assert back_in_words(due, now) == words


def stored_due(client: TestClient, key: str) -> datetime:
    with Session(engine_of(client)) as session:
        card = session.exec(select(ReviewCard).where(ReviewCard.item_key == key)).one()
        return card.due_at


def notice(page: str) -> str | None:
    found = re.search(r'id="coming-back">(.*?)</p>', page)
    return re.sub(r"<[^>]+>", "", found.group(1)) if found else None


def test_the_next_item_says_when_the_rated_one_is_back(client: TestClient, clock: Clock) -> None:
    following = review(client, FIRST, "good")
    assert following.startswith(f"/practice/{SECOND}?")
    due = stored_due(client, FIRST)
    days = (due.date() - MONDAY.date()).days
    assert days >= 2  # rated good: days away, not today or tomorrow
    words = f"Back in {days} days ({due:%a} {due.day} {due:%b})"
    title = all_items()[0].prompt[:40]
    said = notice(client.get(following).text)
    assert said and said.startswith(f"Rated “{title}") and said.endswith(f"{words}.")
    # "Again": back within minutes, so later today, at the stored time.
    following = review(client, SECOND, "again")
    said = notice(client.get(following).text)
    assert said and said.endswith(f"Back later today (at {stored_due(client, SECOND):%H:%M} UTC).")
    # A page reached otherwise says nothing.
    assert notice(client.get(following.split("?")[0]).text) is None


def test_the_last_rating_of_the_day_says_it_on_the_list(client: TestClient, clock: Clock) -> None:
    keys = ready_keys(client)
    for key in keys:
        following = review(client, key, "easy")
    assert following.startswith("/practice?done=1&rated=")
    page = client.get(following).text
    due = stored_due(client, keys[-1])
    said = notice(page)
    assert 'id="practice-done"' in page
    assert said and said.endswith(f"({due:%a} {due.day} {due:%b}).")


def test_only_the_learners_own_rated_items_are_told(client: TestClient, clock: Clock) -> None:
    review(client, FIRST, "good")
    # Never rated (a new item): nothing stored, nothing said.
    assert notice(client.get("/practice", params={"rated": SECOND}).text) is None
    assert notice(client.get("/practice", params={"rated": "x" * 10_000}).text) is None
    # Another learner naming the same item learns nothing of this learner's schedule.
    make_user(engine_of(client), "learner-b")
    other = signed_in(client.app, "learner-b")  # type: ignore[arg-type]
    assert notice(other.get("/practice", params={"rated": FIRST}).text) is None
    assert notice(client.get("/practice", params={"rated": FIRST}).text)
