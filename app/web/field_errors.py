"""What is wrong with a form, field by field.

A form is checked whole: every check runs and every field that failed is reported at once, so
the page can show each message beside its field (templates/macros/fields.html). The services'
own errors (InvalidAttempt, AccountError, InvalidSubmission, InvalidReview, InvalidRating,
InvalidCaseInput) are FieldErrors; `field` and `message` are the first problem, in the order of
the form.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Self


class FieldErrors(ValueError):
    """One or more fields are wrong; `errors` maps each field name to what is wrong with it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.errors: dict[str, str] = {field: message}

    @classmethod
    def of(cls, errors: Mapping[str, str]) -> Self:
        field, message = next(iter(errors.items()))
        error = cls(field, message)
        error.errors = dict(errors)
        return error

    @property
    def field(self) -> str:
        return next(iter(self.errors))

    @property
    def message(self) -> str:
        return next(iter(self.errors.values()))


class ErrorCollector:
    """Gathers the problems of one form; the first message about a field is the one kept."""

    def __init__(self) -> None:
        self.errors: dict[str, str] = {}

    def add(self, field: str, message: str) -> None:
        self.errors.setdefault(field, message)

    @contextmanager
    def checking(self) -> Iterator[None]:
        """Run a check that raises FieldErrors; keep its problems and carry on."""
        try:
            yield
        except FieldErrors as error:
            for field, message in error.errors.items():
                self.add(field, message)

    def raise_if_any(self, kind: type[FieldErrors]) -> None:
        if self.errors:
            raise kind.of(self.errors)
