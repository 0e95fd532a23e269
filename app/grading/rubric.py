"""Reading a review form against a rubric: the decision, a 0-2 score and an optional comment per
criterion, and an overall comment (required when asking for changes). Submissions and cases are
reviewed with the same form, each on its own rubric."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, SQLModel

from app.core.limits import MAX_REVIEW_COMMENT
from app.grading.models import Decision
from app.web.field_errors import ErrorCollector, FieldErrors

Rubric = tuple[tuple[str, str], ...]


class InvalidReview(FieldErrors):
    """Fields of a review form are wrong; `errors` names each."""


@dataclass(frozen=True)
class ReviewForm:
    decision: str
    scores: dict[str, dict[str, Any]]
    comment: str


def parse_review(fields: Mapping[str, str], rubric: Rubric) -> ReviewForm:
    """The form checked whole: every bad field is named in one InvalidReview."""
    problems = ErrorCollector()
    decision = fields.get("decision", "")
    if decision not in {d.value for d in Decision}:
        problems.add("decision", "choose accept or request changes")
    scores: dict[str, dict[str, Any]] = {}
    for key, _label in rubric:
        raw = fields.get(f"score.{key}", "")
        if raw not in {"0", "1", "2"}:
            problems.add(f"score.{key}", "score this criterion 0, 1 or 2")
        comment = fields.get(f"comment.{key}", "").strip()
        if len(comment) > MAX_REVIEW_COMMENT:
            problems.add(f"comment.{key}", f"longer than {MAX_REVIEW_COMMENT} characters")
        scores[key] = {"score": int(raw) if raw in {"0", "1", "2"} else 0, "comment": comment}
    comment = fields.get("comment", "").strip()
    if len(comment) > MAX_REVIEW_COMMENT:
        problems.add("comment", f"longer than {MAX_REVIEW_COMMENT} characters")
    elif decision == Decision.changes_requested and not comment:
        problems.add("comment", "say what to change")
    problems.raise_if_any(InvalidReview)
    return ReviewForm(decision, scores, comment)


def store_decision_once(
    session: Session, rows: Sequence[SQLModel], already_decided: FieldErrors
) -> None:
    """Commit a decision a unique constraint allows once (one review per submission version,
    case attempt or round): when a simultaneous one was stored first, nothing of this one is
    kept and `already_decided` is raised."""
    session.add_all(rows)
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise already_decided from None
