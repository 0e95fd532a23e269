"""Spaced review ("Due today"): what a learner has due, what an item asks and answers, and the
rating that reschedules it.

Items come from two places: the track's review questions (drills/practice/items.py), introduced
a few a day, and the learner's own misses (a run that showed another failure than they predicted,
a case whose cause they named wrongly), which open a card in the transaction that ends the run.
When an item comes back is FSRS's decision (drills/practice/scheduling.py); this module stores
its state and logs every review as evidence. Every function takes the clock as `now`.
"""

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import Any, cast

from sqlalchemy import CursorResult, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app import limits
from app.models import (
    Attempt,
    CaseAttempt,
    ReviewCard,
    ReviewLogEntry,
    ReviewRating,
    ReviewSource,
)
from drills.cases.outcomes import separates
from drills.cases.registry import UnknownCase, get_case
from drills.core.catalogue import describe
from drills.core.registry import get_drill
from drills.practice import scheduling
from drills.practice.items import TOPICS, UnknownItem, all_items, get_item

# New track items a learner meets per day: enough to build a habit, few enough that the day's
# reviews stay a few minutes long as the earlier ones come back.
NEW_PER_DAY = 5
TRACK, DRILL_MISS, CASE_MISS = "track:", "drill-miss:", "case-miss:"


class UnknownPracticeItem(LookupError):
    def __init__(self, key: str) -> None:
        super().__init__(f"No review item {key!r} for you.")


class InvalidReview(ValueError):
    """Every field that was wrong, by name, with what to do about it."""

    def __init__(self, errors: dict[str, str]) -> None:
        super().__init__("; ".join(errors.values()))
        self.errors = errors


class AlreadyRated(ValueError):
    """The item was rated since the page showed it (a double click, a second tab)."""


@dataclass(frozen=True)
class Link:
    label: str
    href: str


@dataclass(frozen=True)
class PracticeItem:
    """An item as a page shows it: the question, and after the learner's answer, the model
    answer with the evidence it rests on and a way to meet it again in a new form."""

    key: str
    source: ReviewSource
    topic: str
    prompt: str  # Markdown
    answer: str  # Markdown
    evidence: list[Link] = field(default_factory=list)
    retry: Link | None = None  # a fresh seed of the drill, or a new draw of the case
    retry_is_post: bool = False


@dataclass(frozen=True)
class DueEntry:
    key: str
    prompt: str
    source: ReviewSource
    due_at: datetime | None  # None: a new item, never reviewed
    reviews: int


@dataclass(frozen=True)
class DueToday:
    ready: list[DueEntry]  # due now, in the order to take them
    later_today: list[DueEntry]  # due again before the day ends (a failed item comes back)
    next_due_at: datetime | None  # after today's: when the next review falls due

    @property
    def count(self) -> int:
        return len(self.ready) + len(self.later_today)


def day_start(now: datetime) -> datetime:
    return datetime.combine(now.date(), time(0), tzinfo=now.tzinfo)


# -- Misses open cards ----------------------------------------------------------------------


def _upsert_miss(session: Session, row: dict[str, Any]) -> None:
    """Open the miss's card, or bring an existing one back now pointing at the newest miss.
    One statement that cannot fail on a concurrent twin: it runs in the transaction that ends
    a run, which must never be lost to a duplicate key."""
    dialect = session.get_bind().dialect.name
    insert = (postgresql if dialect == "postgresql" else sqlite).insert
    statement = insert(ReviewCard).values(**row)
    statement = statement.on_conflict_do_update(
        index_elements=["learner_id", "item_key"],
        set_={
            "attempt_id": statement.excluded.attempt_id,
            "case_attempt_id": statement.excluded.case_attempt_id,
            "due_at": statement.excluded.due_at,
        },
    )
    session.execute(statement)


def note_drill_miss(session: Session, attempt: Attempt, *, now: datetime) -> None:
    """Called with a drill attempt that just ended, in the transaction ending it: a prediction
    the run did not bear out becomes a review item (one per drill and failure shown)."""
    if attempt.case_attempt_id is not None or attempt.prediction_matched is not False:
        return
    key = f"{DRILL_MISS}{attempt.drill_slug}:{attempt.observed_hypothesis}"
    row = {
        "learner_id": attempt.learner_id,
        "item_key": key[: limits.MAX_ITEM_KEY],
        "source": ReviewSource.drill_miss,
        "attempt_id": attempt.id,
        "case_attempt_id": None,
        "due_at": now,
        "reviews": 0,
        "created_at": now,
    }
    _upsert_miss(session, row)


def note_case_miss(session: Session, case_attempt: CaseAttempt, *, now: datetime) -> None:
    """Called with a case attempt just revealed, in the same transaction: a wrongly named cause
    becomes a review item, which sends the learner back to a new draw of the case."""
    score = case_attempt.score or {}
    if score.get("cause_named") is not False:
        return
    row = {
        "learner_id": case_attempt.learner_id,
        "item_key": f"{CASE_MISS}{case_attempt.case_key}",
        "source": ReviewSource.case_miss,
        "attempt_id": None,
        "case_attempt_id": case_attempt.id,
        "due_at": now,
        "reviews": 0,
        "created_at": now,
    }
    _upsert_miss(session, row)


# -- What an item asks ----------------------------------------------------------------------


def card_of(session: Session, *, learner_id: int, key: str) -> ReviewCard | None:
    return session.exec(
        select(ReviewCard).where(ReviewCard.learner_id == learner_id, ReviewCard.item_key == key)
    ).first()


def _track_item(key: str) -> PracticeItem:
    item = get_item(key.removeprefix(TRACK))
    evidence = [Link(describe(get_drill(slug))["title"], f"/drills/{slug}") for slug in item.drills]
    return PracticeItem(
        key=key,
        source=ReviewSource.track,
        topic=TOPICS.get(item.topic, item.topic),
        prompt=item.prompt,
        answer=item.answer,
        evidence=evidence,
    )


def _drill_miss_item(card: ReviewCard, attempt: Attempt) -> PracticeItem:
    drill = describe(get_drill(attempt.drill_slug))
    texts = {item["key"]: item["text"] for item in drill["hypotheses"]}
    predicted = texts.get(attempt.hypothesis, attempt.hypothesis)
    shown = texts.get(attempt.observed_hypothesis or "", attempt.observed_hypothesis or "")
    # Back with a new seed each time: the same setup, other numbers.
    seed = (attempt.seed + 7919 * (card.reviews + 1)) % limits.MAX_SEED
    query = "&".join(f"knob.{name}={value}" for name, value in sorted(attempt.knobs.items()))
    return PracticeItem(
        key=card.item_key,
        source=ReviewSource.drill_miss,
        topic=drill["title"],
        prompt=(
            f"In *{drill['title']}* you predicted: “{predicted}” The run showed something "
            "else. What did it show, and which sign in its curves or tables told the two apart?"
        ),
        answer=f"The run showed: **{shown}**",
        evidence=[Link(f"Your run #{attempt.id}", f"/attempts/{attempt.id}")],
        retry=Link(
            "Predict and run the same setup with a new seed",
            f"/drills/{attempt.drill_slug}?seed={seed}&{query}",
        ),
    )


def _case_miss_item(session: Session, card: ReviewCard, case_attempt: CaseAttempt) -> PracticeItem:
    case = get_case(case_attempt.case_key)
    cause = case.hidden_cause
    named = case_attempt.named_cause or ""
    named_text = case.case_set.cause(named).text if named else "no cause"
    telling = [
        experiment.title
        for experiment in case.case_set.experiments
        if named and separates(case.case_set, experiment.key, cause.key, [named])
    ]
    answer = f"The cause was: **{cause.text}**"
    if telling:
        answer += "\n\nExperiments that tell it from what you named: " + "; ".join(telling) + "."
    return PracticeItem(
        key=card.item_key,
        source=ReviewSource.case_miss,
        topic=case.title,
        prompt=(
            f"In the case *{case.title}* you named: “{named_text}” The cause was another. "
            "What was it, and which experiment would have told the two apart?"
        ),
        answer=answer,
        evidence=[Link("Your attempt at the case", f"/cases/attempts/{case_attempt.id}")],
        retry=Link("Open the case again (a new draw)", f"/cases/{case.key}/attempts"),
        retry_is_post=True,
    )


def practice_item(session: Session, *, learner_id: int, key: str) -> PracticeItem:
    """The item behind `key` for this learner; a miss item is theirs alone."""
    try:
        if key.startswith(TRACK):
            return _track_item(key)
        card = card_of(session, learner_id=learner_id, key=key)
        if card is not None and card.attempt_id is not None and key.startswith(DRILL_MISS):
            attempt = session.get(Attempt, card.attempt_id)
            if attempt is not None:
                return _drill_miss_item(card, attempt)
        if card is not None and card.case_attempt_id is not None and key.startswith(CASE_MISS):
            case_attempt = session.get(CaseAttempt, card.case_attempt_id)
            if case_attempt is not None:
                return _case_miss_item(session, card, case_attempt)
    except (UnknownItem, UnknownCase, KeyError):
        pass  # an item retired from the track: it is no longer asked
    raise UnknownPracticeItem(key)


# -- What is due ----------------------------------------------------------------------------


def due_today(session: Session, *, learner_id: int, now: datetime) -> DueToday:
    tomorrow = day_start(now) + timedelta(days=1)
    cards = session.exec(
        select(ReviewCard)
        .where(ReviewCard.learner_id == learner_id)
        .order_by(col(ReviewCard.due_at), col(ReviewCard.id))
    ).all()
    ready: list[DueEntry] = []
    later: list[DueEntry] = []
    next_due: datetime | None = None
    for card in cards:
        try:
            item = practice_item(session, learner_id=learner_id, key=card.item_key)
        except UnknownPracticeItem:
            continue
        entry = DueEntry(card.item_key, item.prompt, item.source, card.due_at, card.reviews)
        if card.due_at <= now:
            ready.append(entry)
        elif card.due_at < tomorrow:
            later.append(entry)
        elif next_due is None:
            next_due = card.due_at
    ready.extend(_new_track_items(session, learner_id, cards, now))
    return DueToday(ready=ready, later_today=later, next_due_at=next_due)


def _new_track_items(
    session: Session, learner_id: int, cards: Sequence[ReviewCard], now: datetime
) -> list[DueEntry]:
    """The next track items the learner has not met, as many as today's allowance leaves."""
    met = {card.item_key for card in cards}
    met_today = session.exec(
        select(func.count())
        .select_from(ReviewCard)
        .where(
            ReviewCard.learner_id == learner_id,
            ReviewCard.source == ReviewSource.track,
            col(ReviewCard.created_at) >= day_start(now),
        )
    ).one()
    allowance = max(0, NEW_PER_DAY - int(met_today))
    fresh = [item for item in all_items() if f"{TRACK}{item.key}" not in met][:allowance]
    return [
        DueEntry(f"{TRACK}{item.key}", item.prompt, ReviewSource.track, None, 0) for item in fresh
    ]


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
        raise InvalidReview(errors)
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
    chosen = _validated(answer, rating)
    card = card_of(session, learner_id=learner_id, key=key)
    if card is None:
        if item.source != ReviewSource.track:
            raise UnknownPracticeItem(key)
        card = ReviewCard(
            learner_id=learner_id,
            item_key=key,
            source=ReviewSource.track,
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


def review_log(session: Session, *, learner_id: int) -> list[ReviewLogEntry]:
    return list(
        session.exec(
            select(ReviewLogEntry)
            .where(ReviewLogEntry.learner_id == learner_id)
            .order_by(col(ReviewLogEntry.reviewed_at))
        ).all()
    )
