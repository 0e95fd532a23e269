"""The catalogue's "N due today · M due tomorrow" line: read from the learner's stored cards by
the "Due today" page's own count, in calendar days of the app's clock (UTC), moved across
midnight with the test clock."""

import re
from datetime import datetime, timedelta

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session

from app.practice.models import ReviewCard, ReviewSource
from app.practice.outlook import ReviewOutlook, outlook_words
from app.practice.service import NEW_PER_DAY
from drills.practice.items import all_items
from tests.app.clock import MONDAY, Clock
from tests.app.factories import add_user, engine_of, signed_in

MIDNIGHT = MONDAY.replace(hour=0)  # Monday 7 December 2026, 00:00 UTC
TUESDAY, WEDNESDAY = MIDNIGHT + timedelta(days=1), MIDNIGHT + timedelta(days=2)
SECOND = timedelta(seconds=1)


@pytest.mark.parametrize(
    ("outlook", "words"),
    [
        (ReviewOutlook(0, 0, 0), "Nothing due today · 0 due tomorrow"),
        (ReviewOutlook(1, 0, 1), "1 review due today · 1 due tomorrow"),
        (ReviewOutlook(2, 1, 5), "3 reviews due today (1 of them later today) · 5 due tomorrow"),
        (ReviewOutlook(0, 2, 0), "2 reviews due today (2 of them later today) · 0 due tomorrow"),
    ],
)
def test_the_outlook_in_words(outlook: ReviewOutlook, words: str) -> None:
    assert outlook_words(outlook) == words


def add_cards(client: TestClient, learner_id: int, dues: list[datetime]) -> None:
    """Cards reviewed before, one per due date, on the track's first items."""
    with Session(engine_of(client)) as session:
        for item, due in zip(all_items(), dues, strict=False):
            session.add(
                ReviewCard(
                    learner_id=learner_id,
                    item_key=f"track:{item.key}",
                    source=ReviewSource.track,
                    due_at=due,
                    reviews=1,
                    created_at=MIDNIGHT - timedelta(days=30),
                )
            )
        session.commit()


def outlook_line(client: TestClient) -> str:
    found = re.search(
        r'id="due-outlook"><strong>Spaced review:</strong> (.*?) ·\s*<a', client.get("/").text
    )
    assert found, "the catalogue shows the outlook to a learner"
    return found.group(1)


def test_the_catalogue_counts_today_and_tomorrow_across_midnight(
    client: TestClient, clock: Clock
) -> None:
    learner_id = add_user(engine_of(client), "counted")
    learner = signed_in(client.app, "counted")  # type: ignore[arg-type]
    new = NEW_PER_DAY  # today's new items are due today too, and never "tomorrow"
    add_cards(
        client,
        learner_id,
        [
            MONDAY - timedelta(hours=1),  # due this morning
            TUESDAY - SECOND,  # the last second of Monday: later today
            TUESDAY,  # the first moment of Tuesday: tomorrow
            WEDNESDAY - SECOND,  # the last second of Tuesday: tomorrow
            WEDNESDAY,  # Wednesday: neither
        ],
    )
    clock.now = MONDAY  # 09:00
    assert outlook_line(learner) == (
        f"{new + 2} reviews due today (1 of them later today) · 2 due tomorrow"
    )
    clock.now = TUESDAY - SECOND  # the later-today card is due now; tomorrow is unchanged
    assert outlook_line(learner) == f"{new + 2} reviews due today · 2 due tomorrow"
    clock.now = TUESDAY  # a new day: Tuesday's cards are today's, Wednesday's tomorrow's
    assert outlook_line(learner) == (
        f"{new + 4} reviews due today (1 of them later today) · 1 due tomorrow"
    )
    learner.close()


def test_a_learners_count_is_their_own_and_a_visitor_sees_none(
    client: TestClient, clock: Clock
) -> None:
    other = add_user(engine_of(client), "other")
    add_cards(client, other, [MONDAY + timedelta(hours=20), TUESDAY + timedelta(hours=3)])
    clock.now = MONDAY
    # learner-a (the client) has no cards: only today's new items.
    assert outlook_line(client) == f"{NEW_PER_DAY} reviews due today · 0 due tomorrow"
    visitor = TestClient(client.app)
    assert 'id="due-outlook"' not in visitor.get("/").text
    visitor.close()
