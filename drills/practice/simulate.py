"""A simulated learner working the review queue once a day, to show what the schedule does.

Each day at the same hour the learner opens "Due today", meets a few new items and answers
every item that falls due during the sitting. Whether they recall an item is drawn from FSRS's
own prediction of recall at that moment (a fixed chance for an item never seen); a miss is rated
"again" and comes back within the sitting, a recall "good" (FSRS brings an item back when recall
is predicted to have fallen to 90 %, so "easy" would rarely be honest). Deterministic in its
seed.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from drills.practice.items import ReviewItem, all_items
from drills.practice.scheduling import (
    ItemState,
    Rating,
    ReviewLog,
    is_due,
    new_state,
    retrievability,
    review,
)

START = datetime(2026, 12, 1, 18, 0, tzinfo=UTC)
# The chance of knowing an answer on first sight (the learner has done the drills).
FIRST_SIGHT_RECALL = 0.6
# How long a sitting may run: a missed item comes back after a short step within it.
SITTING = timedelta(hours=1)


@dataclass
class ItemHistory:
    item: ReviewItem
    state: ItemState
    logs: list[ReviewLog] = field(default_factory=list)


@dataclass(frozen=True)
class Day:
    number: int  # 1 for the first day
    new: int  # items met for the first time
    due: int  # items already met that fall due during the sitting
    reviews: int  # ratings given (a missed item counts again when it comes back)
    ratings: dict[Rating, int]


def simulate(
    days: int, *, new_per_day: int = 5, seed: int = 0, start: datetime = START
) -> tuple[list[Day], list[ItemHistory]]:
    rng = random.Random(seed)
    unseen = list(all_items())
    met: list[ItemHistory] = []
    report = []
    for number in range(1, days + 1):
        opened = start + timedelta(days=number - 1)
        due = sum(is_due(history.state, opened + SITTING) for history in met)
        fresh = [ItemHistory(item, new_state(opened)) for item in unseen[:new_per_day]]
        del unseen[:new_per_day]
        met.extend(fresh)
        ratings = dict.fromkeys(Rating, 0)
        now = opened
        while met:
            queue = [history for history in met if is_due(history.state, now)]
            if not queue:
                # Wait for the next item to fall due (a missed one comes back after a short
                # step), unless the sitting is over by then.
                now = min(history.state.due for history in met)
                if now >= opened + SITTING:
                    break
                continue
            for history in queue:
                rating = _answer(rng, history.state, now)
                history.state, log = review(history.state, rating, now)
                history.logs.append(log)
                ratings[rating] += 1
                now += timedelta(seconds=30)  # reading, typing, checking
        report.append(Day(number, len(fresh), due, sum(ratings.values()), ratings))
    return report, met


def _answer(rng: random.Random, state: ItemState, now: datetime) -> Rating:
    chance = retrievability(state, now)
    if chance is None:
        chance = FIRST_SIGHT_RECALL
    return Rating.GOOD if rng.random() < chance else Rating.AGAIN


LETTERS = {Rating.AGAIN: "A", Rating.HARD: "H", Rating.GOOD: "G", Rating.EASY: "E"}


def render(days: list[Day], histories: list[ItemHistory], start: datetime = START) -> str:
    """A grid: one row per item, one column per day, the ratings of that day in the cell; then
    each day's totals."""
    lines = [
        "ratings per item and day (A again, G good; . not due), then the day it is due next",
        f"{'item':<32} " + " ".join(f"{day.number:>3}" for day in days) + "  next",
    ]
    for history in histories:
        cells = []
        for day in days:
            opened = start + timedelta(days=day.number - 1)
            given = "".join(
                LETTERS[log.rating]
                for log in history.logs
                if opened <= log.reviewed_at < opened + timedelta(days=1)
            )
            cells.append(f"{given or '.':>3}")
        next_day = (history.state.due - start).days + 1
        lines.append(f"{history.item.key:<32} " + " ".join(cells) + f"  day {next_day}")
    lines.append("")
    lines.append("day  new  due  reviews  again  good")
    for day in days:
        lines.append(
            f"{day.number:>3}  {day.new:>3}  {day.due:>3}  {day.reviews:>7}  "
            f"{day.ratings[Rating.AGAIN]:>5}  {day.ratings[Rating.GOOD]:>4}"
        )
    return "\n".join(lines)
