"""The review schedule, with the clock injected: what "good", "again", "hard" and "easy" do to
when an item is due, that a stored state comes back unchanged, and that intervals grow."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from drills.practice.scheduling import (
    SHORT_STEP,
    ItemState,
    Rating,
    ScheduleError,
    from_json,
    is_due,
    new_state,
    retrievability,
    review,
    to_json,
)

MORNING = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)
END_OF_DAY = MORNING.replace(hour=23, minute=59)


def first_review(rating: Rating) -> ItemState:
    state, _ = review(new_state(MORNING), rating, MORNING)
    return state


def reviewed_good_until(days: int) -> list[tuple[ItemState, timedelta]]:
    """An item rated "good" every time it falls due, for `days` days: each state and interval."""
    state, now, history = new_state(MORNING), MORNING, []
    while now < MORNING + timedelta(days=days):
        state, log = review(state, Rating.GOOD, now)
        history.append((state, log.interval))
        now = state.due
    return history


def test_a_new_item_is_due_at_once() -> None:
    state = new_state(MORNING)
    assert is_due(state, MORNING)
    assert not is_due(state, MORNING - timedelta(seconds=1))


def test_an_item_rated_good_is_not_due_again_the_same_day() -> None:
    state = first_review(Rating.GOOD)
    assert not is_due(state, END_OF_DAY)
    assert state.due - MORNING >= timedelta(days=1)
    assert state.phase == "review"


def test_again_brings_the_item_back_ten_minutes_later() -> None:
    state = first_review(Rating.AGAIN)
    assert SHORT_STEP == timedelta(minutes=10)
    assert state.due == MORNING + SHORT_STEP
    assert not is_due(state, MORNING + SHORT_STEP - timedelta(seconds=1))
    assert is_due(state, MORNING + SHORT_STEP)


def test_again_on_a_known_item_brings_it_back_within_the_sitting() -> None:
    state = first_review(Rating.GOOD)
    later = state.due
    state, log = review(state, Rating.AGAIN, later)
    assert log.interval == SHORT_STEP
    assert state.phase == "relearning" and log.phase_before == "review"
    assert is_due(state, later + SHORT_STEP)


def test_ratings_order_the_next_interval() -> None:
    # hard < good < easy, and easy pushes the item further than good does
    again, hard, good, easy = (first_review(rating).due for rating in Rating)
    assert again < hard < good < easy
    assert easy - MORNING >= 2 * (good - MORNING)
    # The same holds for an item already in review.
    known = first_review(Rating.GOOD)
    nexts = [review(known, rating, known.due)[0].due for rating in Rating]
    assert nexts == sorted(nexts) and len(set(nexts)) == 4


def test_good_ratings_over_two_weeks_give_growing_intervals() -> None:
    history = reviewed_good_until(14)
    intervals = [interval for _, interval in history]
    assert len(intervals) >= 3
    assert all(later > earlier for earlier, later in zip(intervals, intervals[1:], strict=False))
    assert intervals[0] >= timedelta(days=1)
    stabilities = [state.stability or 0.0 for state, _ in history]
    assert stabilities == sorted(stabilities)


def test_the_state_round_trips_through_json_unchanged() -> None:
    for state in [new_state(MORNING), first_review(Rating.AGAIN)] + [
        state for state, _ in reviewed_good_until(30)
    ]:
        text = to_json(state)
        restored = from_json(text)
        assert restored == state
        assert to_json(restored) == text
        # ... and schedules exactly as the original would.
        later = state.due + timedelta(hours=3)
        assert review(restored, Rating.HARD, later) == review(state, Rating.HARD, later)


def test_the_same_reviews_give_the_same_schedule() -> None:
    # No fuzz: a learner's schedule can be rebuilt from their log.
    assert reviewed_good_until(60) == reviewed_good_until(60)


def test_the_log_records_what_the_review_did() -> None:
    state = first_review(Rating.GOOD)
    later = state.due + timedelta(days=1)
    after, log = review(state, Rating.GOOD, later)
    assert log.rating is Rating.GOOD and log.rating.recalled
    assert log.reviewed_at == later
    assert log.elapsed_days == pytest.approx((later - MORNING).total_seconds() / 86400)
    assert log.retrievability is not None and 0 < log.retrievability < 1
    assert log.retrievability == retrievability(state, later)
    assert (log.due_before, log.due_after) == (state.due, after.due)
    assert log.as_dict()["rating"] == "good"
    _, first = review(new_state(MORNING), Rating.AGAIN, MORNING)
    assert first.elapsed_days is None and first.retrievability is None
    assert not first.rating.recalled


def test_other_time_zones_are_converted_and_naive_times_refused() -> None:
    elsewhere = MORNING.astimezone(timezone(timedelta(hours=5)))
    state, log = review(new_state(elsewhere), Rating.GOOD, elsewhere)
    assert log.reviewed_at == MORNING and log.reviewed_at.tzinfo is UTC
    assert state == first_review(Rating.GOOD)
    with pytest.raises(ScheduleError, match="time zone"):
        new_state(datetime(2026, 12, 1, 9, 0))
    with pytest.raises(ScheduleError, match="time zone"):
        is_due(state, datetime(2026, 12, 1, 9, 0))


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        "{}",
        '{"phase": "mastered", "step": 0, "stability": null, "difficulty": null,'
        ' "due": "2026-12-01T09:00:00+00:00", "last_review": null}',
        '{"phase": "learning", "step": 0, "stability": null, "difficulty": null,'
        ' "due": "2026-12-01T09:00:00", "last_review": null}',
    ],
)
def test_a_damaged_stored_state_is_refused_by_name(text: str) -> None:
    with pytest.raises(ScheduleError):
        from_json(text)


def test_ratings_carry_the_products_names() -> None:
    assert [rating.value for rating in Rating] == ["again", "hard", "good", "easy"]
    assert Rating("good") is Rating.GOOD
