from datetime import UTC, datetime


def utcnow() -> datetime:
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """A stored moment with its zone: SQLite reads datetimes back naive, and every one the app
    stores is UTC."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
