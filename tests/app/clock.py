"""A clock the tests set by hand, handed to the app in place of deps.get_now (see the `clock`
fixture in tests/app/conftest.py)."""

from datetime import UTC, datetime

MONDAY = datetime(2026, 12, 7, 9, 0, tzinfo=UTC)


class Clock:
    def __init__(self, now: datetime) -> None:
        self.now = now

    def __call__(self) -> datetime:
        return self.now
