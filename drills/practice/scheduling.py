"""When a review item comes back: a thin layer over the FSRS scheduler of the `fsrs` package.

The intervals are FSRS's own (stability and difficulty per learner and item, the next review
when recall is predicted to have dropped to `DESIRED_RETENTION`); this module only fixes the
settings, names the ratings as the product does, takes the clock as an argument and keeps the
state in a form a database column can hold.

Settings, and why:
- one short learning step of `SHORT_STEP`: an item a learner fails ("again") comes back in the
  same sitting, while an item answered well on first sight goes straight to days. (The
  package's default of 1 and 10 minutes would bring a "good" back within the hour.)
- no fuzzing: the package draws its fuzz from the global random generator, so the same reviews
  would give different dates. Without it a learner's schedule can be rebuilt from their log.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import Enum
from typing import Any, Literal

import fsrs

DESIRED_RETENTION = 0.9  # the package's default: review when recall has dropped to 90 %
SHORT_STEP = timedelta(minutes=10)
# A course track, not a lifetime deck: nothing waits longer than a year.
MAXIMUM_INTERVAL_DAYS = 365

_SCHEDULER = fsrs.Scheduler(
    desired_retention=DESIRED_RETENTION,
    learning_steps=(SHORT_STEP,),
    relearning_steps=(SHORT_STEP,),
    maximum_interval=MAXIMUM_INTERVAL_DAYS,
    enable_fuzzing=False,
)

Phase = Literal["learning", "review", "relearning"]
_PHASES: dict[fsrs.State, Phase] = {
    fsrs.State.Learning: "learning",
    fsrs.State.Review: "review",
    fsrs.State.Relearning: "relearning",
}
_STATES = {phase: state for state, phase in _PHASES.items()}
# The package's card id is only a label for its own logs; one learner's item needs none.
_CARD_ID = 0


class Rating(Enum):
    """How well the learner recalled the answer, in the product's words."""

    AGAIN = "again"  # did not recall it
    HARD = "hard"  # recalled it with real effort
    GOOD = "good"  # recalled it
    EASY = "easy"  # recalled it at once

    @property
    def recalled(self) -> bool:
        return self is not Rating.AGAIN


_FSRS_RATINGS = {
    Rating.AGAIN: fsrs.Rating.Again,
    Rating.HARD: fsrs.Rating.Hard,
    Rating.GOOD: fsrs.Rating.Good,
    Rating.EASY: fsrs.Rating.Easy,
}


class ScheduleError(ValueError):
    """A clock without a time zone, or a stored state that cannot be read."""


@dataclass(frozen=True)
class ItemState:
    """One learner's schedule for one item."""

    phase: Phase
    step: int | None  # the learning step, while learning or relearning
    stability: float | None  # days until recall drops to 90 % (None before the first review)
    difficulty: float | None  # 1 (easy) .. 10 (hard), None before the first review
    due: datetime  # UTC
    last_review: datetime | None  # UTC


@dataclass(frozen=True)
class ReviewLog:
    """What one review did: the evidence the app keeps for every rating."""

    rating: Rating
    reviewed_at: datetime
    # Days since the previous review (None for the first): retention is read on reviews made
    # a day or more after the last one.
    elapsed_days: float | None
    # Predicted probability of recall at the moment of the review (None for the first).
    retrievability: float | None
    due_before: datetime
    due_after: datetime
    phase_before: Phase
    phase_after: Phase

    @property
    def interval(self) -> timedelta:
        """How long until the item is due again."""
        return self.due_after - self.reviewed_at

    def as_dict(self) -> dict[str, Any]:
        return {
            "rating": self.rating.value,
            "reviewed_at": self.reviewed_at.isoformat(),
            "elapsed_days": self.elapsed_days,
            "retrievability": self.retrievability,
            "due_before": self.due_before.isoformat(),
            "due_after": self.due_after.isoformat(),
            "phase_before": self.phase_before,
            "phase_after": self.phase_after,
        }


def utc(moment: datetime) -> datetime:
    """`moment` in UTC; a naive datetime is refused rather than guessed at."""
    if moment.tzinfo is None or moment.tzinfo.utcoffset(moment) is None:
        raise ScheduleError(f"a time without a time zone: {moment.isoformat()}")
    return moment.astimezone(UTC)


def new_state(now: datetime) -> ItemState:
    """An item the learner has not seen yet: due at once."""
    return ItemState(
        phase="learning", step=0, stability=None, difficulty=None, due=utc(now), last_review=None
    )


def is_due(state: ItemState, now: datetime) -> bool:
    return state.due <= utc(now)


def retrievability(state: ItemState, now: datetime) -> float | None:
    """FSRS's predicted probability that the learner recalls the item at `now` (None before the
    first review)."""
    if state.last_review is None:
        return None
    return float(_SCHEDULER.get_card_retrievability(_to_card(state), current_datetime=utc(now)))


def review(state: ItemState, rating: Rating, now: datetime) -> tuple[ItemState, ReviewLog]:
    """Rate the item at `now`; returns the new state and the log of this review."""
    now = utc(now)
    reviewed, _ = _SCHEDULER.review_card(
        _to_card(state), _FSRS_RATINGS[rating], review_datetime=now
    )
    after = _from_card(reviewed)
    log = ReviewLog(
        rating=rating,
        reviewed_at=now,
        elapsed_days=(
            (now - state.last_review).total_seconds() / 86400
            if state.last_review is not None
            else None
        ),
        retrievability=retrievability(state, now),
        due_before=state.due,
        due_after=after.due,
        phase_before=state.phase,
        phase_after=after.phase,
    )
    return after, log


def to_json(state: ItemState) -> str:
    """The state as a JSON object (sorted keys), for a text column."""
    return json.dumps(
        {
            "phase": state.phase,
            "step": state.step,
            "stability": state.stability,
            "difficulty": state.difficulty,
            "due": state.due.isoformat(),
            "last_review": state.last_review.isoformat() if state.last_review else None,
        },
        sort_keys=True,
        allow_nan=False,
    )


def from_json(text: str) -> ItemState:
    try:
        data = json.loads(text)
        phase = data["phase"]
        if phase not in _STATES:
            raise ScheduleError(f"unknown phase {phase!r}")
        return ItemState(
            phase=phase,
            step=None if data["step"] is None else int(data["step"]),
            stability=None if data["stability"] is None else float(data["stability"]),
            difficulty=None if data["difficulty"] is None else float(data["difficulty"]),
            due=utc(datetime.fromisoformat(data["due"])),
            last_review=(
                None
                if data["last_review"] is None
                else utc(datetime.fromisoformat(data["last_review"]))
            ),
        )
    except ScheduleError:
        raise
    except (KeyError, TypeError, ValueError) as exc:
        raise ScheduleError(f"not a stored review state: {exc!r}") from None


def _to_card(state: ItemState) -> fsrs.Card:
    return fsrs.Card(
        card_id=_CARD_ID,
        state=_STATES[state.phase],
        step=state.step,
        stability=state.stability,
        difficulty=state.difficulty,
        due=state.due,
        last_review=state.last_review,
    )


def _from_card(card: fsrs.Card) -> ItemState:
    return ItemState(
        phase=_PHASES[card.state],
        step=card.step,
        stability=card.stability,
        difficulty=card.difficulty,
        due=utc(card.due),
        last_review=utc(card.last_review) if card.last_review else None,
    )
