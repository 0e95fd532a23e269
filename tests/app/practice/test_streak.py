"""The streak: days in a row, in UTC, with a rating or a run, from the stored timestamps; and
the learner's setting that hides it on the drills list and the "Due today" page."""

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, func, select

from app.practice.models import PracticeSettings, ReviewCard, ReviewLogEntry, ReviewSource
from app.practice.streak import MAX_STREAK_DAYS, WINDOW_DAYS, Streak, streak, streak_words
from app.runs.models import Attempt
from tests.app.clock import MONDAY, Clock
from tests.app.factories import add_user, engine_of, signed_in, snapshot

MIDNIGHT = MONDAY.replace(hour=0)  # Monday 7 December 2026, 00:00 UTC
DAY = timedelta(days=1)
SECOND = timedelta(seconds=1)


@pytest.fixture
def engine(anonymous: TestClient) -> Iterator[Engine]:
    yield engine_of(anonymous)


def run_at(engine: Engine, learner_id: int, moment: datetime) -> None:
    """A run started at `moment` (only its start counts)."""
    with Session(engine) as session:
        session.add(
            Attempt(
                learner_id=learner_id,
                drill_slug="overfit-one-batch",
                drill_version="1",
                hypothesis="fits",
                prediction_text="zero",
                knobs={},
                seed=0,
                command="python -m drills run overfit-one-batch --seed 0",
                status="succeeded",
                created_at=moment,
            )
        )
        session.commit()


def rating_at(engine: Engine, learner_id: int, moment: datetime) -> None:
    with Session(engine) as session:
        card = ReviewCard(
            learner_id=learner_id,
            item_key=f"track:item-{moment.timestamp()}",
            source=ReviewSource.track,
            due_at=moment + DAY,
            reviews=1,
        )
        session.add(card)
        session.flush()
        assert card.id is not None
        session.add(
            ReviewLogEntry(
                card_id=card.id,
                learner_id=learner_id,
                item_key=card.item_key,
                answer="From memory.",
                rating="good",
                due_after=moment + DAY,
                reviewed_at=moment,
            )
        )
        session.commit()


def streak_of(engine: Engine, learner_id: int, now: datetime) -> Streak:
    with Session(engine) as session:
        return streak(session, learner_id=learner_id, now=now)


def test_no_activity_is_no_streak(engine: Engine) -> None:
    learner = add_user(engine, "lee")
    assert streak_of(engine, learner, MONDAY) == Streak(0, False)


def test_days_in_a_row_ending_today_or_yesterday(engine: Engine) -> None:
    learner = add_user(engine, "lee")
    run_at(engine, learner, MIDNIGHT - 2 * DAY + timedelta(hours=10))  # Saturday
    rating_at(engine, learner, MIDNIGHT - DAY + timedelta(hours=18))  # Sunday: a rating counts
    # Monday 09:00, nothing yet today: the streak is alive (two days) until midnight.
    assert streak_of(engine, learner, MONDAY) == Streak(2, False)
    run_at(engine, learner, MONDAY - timedelta(hours=1))  # 08:00 today
    assert streak_of(engine, learner, MONDAY) == Streak(3, True)
    # Tuesday with nothing: alive, three days; Wednesday with nothing on Tuesday: over.
    assert streak_of(engine, learner, MIDNIGHT + DAY + timedelta(hours=23)) == Streak(3, False)
    assert streak_of(engine, learner, MIDNIGHT + 2 * DAY) == Streak(0, False)


def test_a_gap_ends_the_streak_and_several_on_one_day_count_once(engine: Engine) -> None:
    learner = add_user(engine, "lee")
    run_at(engine, learner, MIDNIGHT - 3 * DAY)  # Friday: cut off by an empty Saturday
    for hour in (1, 2, 23):
        run_at(engine, learner, MIDNIGHT - DAY + timedelta(hours=hour))  # Sunday, thrice
    run_at(engine, learner, MIDNIGHT)  # Monday 00:00:00
    assert streak_of(engine, learner, MONDAY) == Streak(2, True)


def test_the_day_changes_at_midnight_utc_to_the_second(engine: Engine) -> None:
    learner = add_user(engine, "lee")
    run_at(engine, learner, MIDNIGHT - SECOND)  # Sunday 23:59:59
    run_at(engine, learner, MIDNIGHT)  # Monday 00:00:00: a second later, another day
    assert streak_of(engine, learner, MIDNIGHT + SECOND) == Streak(2, True)
    lone = add_user(engine, "lone")
    run_at(engine, lone, MIDNIGHT - DAY - SECOND)  # Saturday 23:59:59
    # Monday 00:00:01: Sunday is empty, so Saturday's run no longer counts.
    assert streak_of(engine, lone, MIDNIGHT + SECOND) == Streak(0, False)
    assert streak_of(engine, lone, MIDNIGHT - SECOND) == Streak(1, False)  # still Sunday


def test_days_are_utc_days_whatever_zone_a_time_is_given_in(engine: Engine) -> None:
    learner = add_user(engine, "lee")
    east = timezone(timedelta(hours=3))
    # 01:00 on Monday in UTC+3 is 22:00 on Sunday UTC: it counts for Sunday.
    run_at(engine, learner, datetime(2026, 12, 7, 1, 0, tzinfo=east))
    assert streak_of(engine, learner, MONDAY) == Streak(1, False)
    # A "now" given in UTC+3 is read in UTC: Monday 02:00 there is still Sunday in UTC.
    assert streak_of(engine, learner, datetime(2026, 12, 7, 2, 0, tzinfo=east)) == Streak(1, True)


def test_a_streak_longer_than_one_read_window_is_counted_whole(engine: Engine) -> None:
    learner = add_user(engine, "lee")
    length = WINDOW_DAYS * 2 + 5
    for back in range(length):
        run_at(engine, learner, MONDAY - back * DAY)
    run_at(engine, learner, MONDAY - (length + 1) * DAY)  # after a one-day gap: not counted
    assert streak_of(engine, learner, MONDAY) == Streak(length, True)


def test_another_learners_activity_is_not_counted(engine: Engine) -> None:
    learner, other = add_user(engine, "lee"), add_user(engine, "other")
    run_at(engine, other, MONDAY)
    rating_at(engine, other, MONDAY - DAY)
    assert streak_of(engine, learner, MONDAY) == Streak(0, False)


@pytest.mark.parametrize(
    ("found", "words"),
    [
        (Streak(0, False), "No streak yet: rate a review item or start a run today to begin one"),
        (Streak(1, True), "1-day streak · today counted"),
        (Streak(4, False), "4-day streak · rate a review item or start a run today to keep it"),
        (Streak(MAX_STREAK_DAYS, True), f"at least {MAX_STREAK_DAYS}-day streak · today counted"),
    ],
)
def test_the_streak_in_words(found: Streak, words: str) -> None:
    assert streak_words(found) == words


def settings_rows(engine: Engine) -> int:
    with Session(engine) as session:
        return int(session.exec(select(func.count()).select_from(PracticeSettings)).one())


def test_a_learner_hides_and_shows_their_streak(client: TestClient, clock: Clock) -> None:
    engine = engine_of(client)
    clock.now = MONDAY
    add_user(engine, "other")
    other = signed_in(client.app, "other")  # type: ignore[arg-type]
    for page in ("/", "/practice"):
        assert 'id="streak"' in client.get(page).text  # shown by default
    assert "Your streak is shown." in client.get("/progress").text
    for _ in range(2):  # a double submit ends in the same state, one row
        hidden = client.post("/practice/streak", data={"show": "no"}, follow_redirects=False)
        assert hidden.status_code == 303
        assert hidden.headers["location"] == "/progress#streak-setting"
    assert settings_rows(engine) == 1
    for page in ("/", "/practice"):
        assert 'id="streak"' not in client.get(page).text
    assert "Your streak is hidden." in client.get("/progress").text
    # The outlook stays: only the streak is hidden. Another learner's choice is their own.
    assert 'id="due-outlook"' in client.get("/").text
    assert 'id="streak"' in other.get("/").text
    shown = client.post("/practice/streak", data={"show": "yes"}, follow_redirects=False)
    assert shown.status_code == 303 and 'id="streak"' in client.get("/").text
    other.close()


def test_a_value_the_form_does_not_offer_is_refused_and_nothing_stored(
    client: TestClient,
) -> None:
    engine = engine_of(client)
    before = snapshot(engine)
    for value in ("", "maybe", "No"):
        refused = client.post("/practice/streak", data={"show": value})
        assert refused.status_code == 422
        assert "Say whether to show your streak: yes or no." in refused.text
    assert snapshot(engine) == before
