"""Spaced review ("Due today"): what a learner has due, and the rating that reschedules an item.

Items (app/practice/items.py) are the track's review questions, introduced a few a day, a cohort's
own questions, and the learner's misses (app/practice/misses.py). When an item comes back is
FSRS's decision (drills/practice/scheduling.py); this module stores its state and logs every
review as evidence. Every function takes the clock as `now`.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app.core import limits
from app.practice.items import (
    COHORT,
    TRACK,
    UnknownPracticeItem,
    card_of,
    cohort_items_for,
    item_title,
    practice_item,
)
from app.practice.models import ReviewCard, ReviewLogEntry, ReviewRating, ReviewSource
from app.web.field_errors import FieldErrors
from drills.practice import scheduling
from drills.practice.items import all_items

# New track items a learner meets per day: enough to build a habit, few enough that the day's
# reviews stay a few minutes long as the earlier ones come back.
NEW_PER_DAY = 5
# Items a learner meets as new ones (a few a day), as opposed to their misses (due at once).
INTRODUCED = (ReviewSource.track, ReviewSource.cohort)


class InvalidRating(FieldErrors):
    """Every field of a review that was wrong, by name, with what to do about it."""


class AlreadyRated(ValueError):
    """The item was rated since the page showed it (a double click, a second tab)."""


@dataclass(frozen=True)
class DueEntry:
    key: str
    title: str  # plain text, and never the answer (the list is read before answering)
    source: ReviewSource
    due_at: datetime | None  # None: a new item, never reviewed
    reviews: int


@dataclass(frozen=True)
class DueToday:
    ready: list[DueEntry]  # due now, in the order to take them
    later_today: list[DueEntry]  # due again before the day ends (a failed item comes back)
    next_due_at: datetime | None  # after today's: when the next review falls due
    due_tomorrow: int  # items met before that fall due tomorrow (new ones come on top)


def day_start(now: datetime) -> datetime:
    return datetime.combine(now.date(), time(0), tzinfo=now.tzinfo)


def due_today(session: Session, *, learner_id: int, now: datetime) -> DueToday:
    tomorrow = day_start(now) + timedelta(days=1)
    day_after = tomorrow + timedelta(days=1)
    cards = session.exec(
        select(ReviewCard)
        .where(ReviewCard.learner_id == learner_id)
        .order_by(col(ReviewCard.due_at), col(ReviewCard.id))
    ).all()
    ready: list[DueEntry] = []
    later: list[DueEntry] = []
    next_due: datetime | None = None
    due_tomorrow = 0
    for card in cards:
        try:
            item = practice_item(session, learner_id=learner_id, key=card.item_key)
        except UnknownPracticeItem:
            continue
        # A cohort's question is its own title; other titles never give the answer away.
        title = item.prompt if item.source == ReviewSource.cohort else item_title(card.item_key)
        entry = DueEntry(card.item_key, title, item.source, card.due_at, card.reviews)
        if card.due_at <= now:
            ready.append(entry)
        elif card.due_at < tomorrow:
            later.append(entry)
        else:
            next_due = next_due or card.due_at  # the cards come soonest first
            due_tomorrow += card.due_at < day_after
    ready.extend(_new_items(session, learner_id, cards, now))
    return DueToday(ready=ready, later_today=later, next_due_at=next_due, due_tomorrow=due_tomorrow)


def _new_items(
    session: Session, learner_id: int, cards: Sequence[ReviewCard], now: datetime
) -> list[DueEntry]:
    """The next items the learner has not met (their instructors' first, then the track's), as
    many as today's allowance leaves."""
    met = {card.item_key for card in cards}
    met_today = session.exec(
        select(func.count())
        .select_from(ReviewCard)
        .where(
            ReviewCard.learner_id == learner_id,
            col(ReviewCard.source).in_(INTRODUCED),
            col(ReviewCard.created_at) >= day_start(now),
        )
    ).one()
    allowance = max(0, NEW_PER_DAY - int(met_today))
    candidates = [
        DueEntry(f"{COHORT}{item.id}", item.prompt, ReviewSource.cohort, None, 0)
        for item in cohort_items_for(session, learner_id)
    ] + [
        DueEntry(f"{TRACK}{item.key}", item.prompt, ReviewSource.track, None, 0)
        for item in all_items()
    ]
    return [entry for entry in candidates if entry.key not in met][:allowance]


# -- Rating ---------------------------------------------------------------------------------


def answer_errors(answer: str) -> dict[str, str]:
    """What is wrong with an answer typed from memory (nothing: an empty dict)."""
    if not answer.strip():
        return {"answer": "Write your answer from memory first: the model answer comes after."}
    if len(answer) > limits.MAX_REVIEW_ANSWER:
        return {"answer": f"Keep the answer under {limits.MAX_REVIEW_ANSWER} characters."}
    return {}


def _validated(answer: str, rating: str) -> ReviewRating:
    errors = answer_errors(answer)
    if rating not in set(ReviewRating):
        errors["rating"] = "Say how well you recalled it: again, hard, good or easy."
    if errors:
        raise InvalidRating.of(errors)
    return ReviewRating(rating)


def rate(
    session: Session,
    *,
    learner_id: int,
    key: str,
    answer: str,
    rating: str,
    seen_reviews: int,
    now: datetime,
) -> ReviewLogEntry:
    """Log the review and reschedule the item. `seen_reviews` is the count the page showed:
    a second rating of the same showing (two tabs, a double click) is refused, not counted."""
    item = practice_item(session, learner_id=learner_id, key=key)
    if item.graded_by_run:
        # The judge grades it from the learner's next run; a typed rating would be unmeasured.
        raise InvalidRating.of({"rating": "Your next run of the exercise grades this item."})
    chosen = _validated(answer, rating)
    card = card_of(session, learner_id=learner_id, key=key)
    if card is None:
        if item.source not in INTRODUCED:
            raise UnknownPracticeItem(key)
        card = ReviewCard(
            learner_id=learner_id,
            item_key=key,
            source=item.source,
            due_at=now,
            created_at=now,
        )
        session.add(card)
        try:
            session.flush()
        except IntegrityError:  # its twin request made the card first: it rates this showing
            # (No rollback here: it would expire the page's user; closing the session ends
            # the transaction.)
            raise AlreadyRated(key) from None
    assert card.id is not None
    state = (
        scheduling.from_json(json.dumps(card.schedule))
        if card.schedule is not None
        else scheduling.new_state(now)
    )
    after, log = scheduling.review(state, scheduling.Rating(chosen.value), now)
    # Only if nobody rated it since the page showed it: one statement, so two presses at once
    # (on SQLite too, which has no row locks) count once.
    moved = session.execute(
        update(ReviewCard)
        .where(col(ReviewCard.id) == card.id, col(ReviewCard.reviews) == seen_reviews)
        .values(
            schedule=json.loads(scheduling.to_json(after)),
            due_at=after.due,
            reviews=seen_reviews + 1,
        )
    )
    if cast(CursorResult[Any], moved).rowcount != 1:
        raise AlreadyRated(key)
    entry = ReviewLogEntry(
        card_id=card.id,
        learner_id=learner_id,
        item_key=key,
        answer=answer,
        rating=chosen,
        elapsed_days=log.elapsed_days,
        retrievability=log.retrievability,
        due_after=after.due,
        reviewed_at=now,
    )
    session.add(entry)
    session.commit()
    session.refresh(entry)
    return entry
