"""A due date in words, beside the date itself: "in 3 days", "5 hours ago"."""

from datetime import datetime

from app.models.time import as_utc

_UNITS = (("day", 86_400), ("hour", 3_600), ("minute", 60))


def in_words(moment: datetime, *, now: datetime) -> str:
    """How far `moment` is from `now`, in the largest whole unit (rounded down)."""
    gap = (as_utc(moment) - as_utc(now)).total_seconds()
    ahead = gap > 0  # a moment just past is "ago", however little
    seconds = int(abs(gap))
    for unit, size in _UNITS:
        if seconds >= size:
            count = seconds // size
            span = f"{count} {unit}{'s' if count != 1 else ''}"
            return f"in {span}" if ahead else f"{span} ago"
    return "in less than a minute" if ahead else "less than a minute ago"


def as_date(moment: datetime) -> str:
    """The moment as a person reads it, always in UTC: "Fri 18 Dec 2026, 17:00 UTC"."""
    return f"{as_utc(moment):%a %d %b %Y, %H:%M} UTC"


def as_field(moment: datetime) -> str:
    """The moment as a datetime-local field holds it (UTC)."""
    return f"{as_utc(moment):%Y-%m-%dT%H:%M}"
