"""What the catalogue says of a learner's spaced review: how many items are due today and how
many fall due tomorrow ("3 reviews due today · 5 due tomorrow").

Read from the learner's stored cards by the same code as the "Due today" page
(app/practice/service.py, `due_today`), so the two pages cannot disagree. Days are calendar days
of the app's clock, which is UTC.
"""

from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session

from app.practice.service import due_today


@dataclass(frozen=True)
class ReviewOutlook:
    ready: int  # due now, new items of today's allowance included
    later_today: int  # due again before midnight UTC
    tomorrow: int  # items met before that fall due tomorrow (new ones come on top)

    @property
    def today(self) -> int:
        return self.ready + self.later_today


def review_outlook(session: Session, *, learner_id: int, now: datetime) -> ReviewOutlook:
    due = due_today(session, learner_id=learner_id, now=now)
    return ReviewOutlook(len(due.ready), len(due.later_today), due.due_tomorrow)


def _reviews(count: int) -> str:
    return f"{count} review{'s' if count != 1 else ''}"


def outlook_words(outlook: ReviewOutlook) -> str:
    """The catalogue's line: "3 reviews due today (1 of them later today) · 5 due tomorrow"."""
    if outlook.today == 0:
        today = "Nothing due today"
    else:
        today = f"{_reviews(outlook.today)} due today"
        if outlook.later_today:
            today += f" ({outlook.later_today} of them later today)"
    return f"{today} · {outlook.tomorrow} due tomorrow"
