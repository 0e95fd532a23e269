"""Due dates (app/assignments/when.py, forms.py): in words by the largest whole unit, ahead or
past; as a date and a form field in UTC; read from the form as UTC."""

from datetime import UTC, datetime, timedelta

import pytest

from app.assignments.forms import parse_due
from app.assignments.when import as_date, as_field, in_words

NOW = datetime(2026, 12, 15, 17, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("offset", "words"),
    [
        (timedelta(days=3, hours=5), "in 3 days"),
        (timedelta(days=1), "in 1 day"),
        (timedelta(hours=2, minutes=59), "in 2 hours"),
        (timedelta(minutes=1), "in 1 minute"),
        (timedelta(seconds=20), "in less than a minute"),
        (timedelta(0), "less than a minute ago"),
        (-timedelta(milliseconds=500), "less than a minute ago"),
        (-timedelta(minutes=5), "5 minutes ago"),
        (-timedelta(days=2, hours=23), "2 days ago"),
    ],
)
def test_a_moment_in_words(offset: timedelta, words: str) -> None:
    assert in_words(NOW + offset, now=NOW) == words


def test_a_moment_as_a_date_and_as_a_field_is_in_utc() -> None:
    naive = datetime(2026, 12, 18, 17, 0)  # SQLite reads UTC back without its zone
    assert as_date(naive) == "Fri 18 Dec 2026, 17:00 UTC"
    assert as_field(naive) == "2026-12-18T17:00"


def test_a_due_date_with_an_offset_is_stored_in_utc() -> None:
    assert parse_due("2026-12-18T18:00+01:00") == datetime(2026, 12, 18, 17, 0, tzinfo=UTC)
    assert parse_due(" 2026-12-18T17:00 ") == datetime(2026, 12, 18, 17, 0, tzinfo=UTC)
