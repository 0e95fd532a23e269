"""When a rated review item comes back, in words: the line a learner reads on the page a rating
leads to ("Back in 4 days (Fri 11 Dec)"). The page names the rated item; its due date is read
from the learner's stored card, never taken from the request."""

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from app.core import limits
from app.practice.items import card_of, item_title


@dataclass(frozen=True)
class ComingBack:
    title: str  # the item as the lists name it: plain text, never its answer
    words: str  # "Back tomorrow (Tue 8 Dec)"


def _day(due: datetime, now: datetime) -> str:
    # The year only when it is not this one: most intervals are weeks, a few run past New Year.
    year = f" {due.year}" if due.year != now.year else ""
    return f"{due:%a} {due.day} {due:%b}{year}"


def back_in_words(due_at: datetime, now: datetime) -> str:
    """How far off `due_at` is, counted in calendar days of the app's clock (UTC, as the lists
    and the day's allowance of new items count them), not in 24-hour spans: an item due at
    08:00 tomorrow is back "tomorrow" when rated at 23:00 today."""
    due = due_at.astimezone(now.tzinfo)
    days = (due.date() - now.date()).days
    if due <= now:
        return "Due again now"
    if days == 0:
        return f"Back later today (at {due:%H:%M} UTC)"
    if days == 1:
        return f"Back tomorrow ({_day(due, now)})"
    return f"Back in {days} days ({_day(due, now)})"


def coming_back(session: Session, *, learner_id: int, key: str, now: datetime) -> ComingBack | None:
    """When the learner's rated item `key` is back; None when the key names none of their rated
    items (no key, a hand-edited link, someone else's item)."""
    if not key or len(key) > limits.MAX_ITEM_KEY:
        return None
    card = card_of(session, learner_id=learner_id, key=key)
    if card is None or card.reviews == 0:
        return None
    return ComingBack(item_title(key), back_in_words(card.due_at, now))
