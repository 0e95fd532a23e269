"""A learner's streak: the days in a row, up to today, on which they rated a review item or
started a run (a drill's, a case's, a round's or an exercise's).

Days are calendar days in UTC, midnight to midnight, for every learner wherever they are: the
pages say so. A streak is still alive while today is not yet active (yesterday's counts until
midnight UTC); it ends at the first day without a rating or a run. Computed from the stored
timestamps (review_log.reviewed_at, attempt.created_at) each time, never stored.
"""

from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from sqlmodel import Session, col, select

from app.models.time import as_utc
from app.practice.models import ReviewLogEntry
from app.practice.settings import shows_streak
from app.runs.models import Attempt

# Days of activity read per query: one query pair covers most streaks; a longer one reads on.
WINDOW_DAYS = 64
# A streak is counted up to this; past it the page says "at least".
MAX_STREAK_DAYS = 1000


@dataclass(frozen=True)
class Streak:
    days: int  # the days in a row with a rating or a run, ending today or yesterday
    active_today: bool  # today is one of them


def _active_days(session: Session, learner_id: int, start: datetime, end: datetime) -> set[date]:
    """The UTC days in [start, end) on which the learner rated an item or started a run."""
    ratings = select(ReviewLogEntry.reviewed_at).where(
        ReviewLogEntry.learner_id == learner_id,
        col(ReviewLogEntry.reviewed_at) >= start,
        col(ReviewLogEntry.reviewed_at) < end,
    )
    runs = select(Attempt.created_at).where(
        Attempt.learner_id == learner_id,
        col(Attempt.created_at) >= start,
        col(Attempt.created_at) < end,
    )
    moments = [*session.exec(ratings).all(), *session.exec(runs).all()]
    return {as_utc(moment).astimezone(UTC).date() for moment in moments}


def streak(session: Session, *, learner_id: int, now: datetime) -> Streak:
    today = now.astimezone(UTC).date()
    window_end = datetime.combine(today + timedelta(days=1), time(0), tzinfo=UTC)
    day, days, active_today = today, 0, False
    while days < MAX_STREAK_DAYS:
        window_start = window_end - timedelta(days=WINDOW_DAYS)
        active = _active_days(session, learner_id, window_start, window_end)
        while day >= window_start.date():
            if day in active:
                days += 1
                active_today = active_today or day == today
            elif day != today:  # a day without activity ends it (today may still come)
                return Streak(days, active_today)
            day -= timedelta(days=1)
        window_end = window_start
    return Streak(min(days, MAX_STREAK_DAYS), active_today)


def streak_words(found: Streak) -> str:
    """The line the pages show: "4-day streak · today counted"."""
    if found.days == 0:
        return "No streak yet: rate a review item or start a run today to begin one"
    length = f"at least {MAX_STREAK_DAYS}" if found.days >= MAX_STREAK_DAYS else str(found.days)
    if found.active_today:
        return f"{length}-day streak · today counted"
    return f"{length}-day streak · rate a review item or start a run today to keep it"


def shown_streak(session: Session, *, learner_id: int, now: datetime) -> str | None:
    """The streak's line, or None when the learner chose to hide it."""
    if not shows_streak(session, learner_id=learner_id):
        return None
    return streak_words(streak(session, learner_id=learner_id, now=now))
