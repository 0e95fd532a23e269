"""Reading a review form against a rubric: the decision, a 0-2 score and an optional comment per
criterion, and an overall comment (required when asking for changes). Submissions and cases are
reviewed with the same form, each on its own rubric."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from app.limits import MAX_REVIEW_COMMENT
from app.models import Decision

Rubric = tuple[tuple[str, str], ...]


class InvalidReview(ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


@dataclass(frozen=True)
class ReviewForm:
    decision: str
    scores: dict[str, dict[str, Any]]
    comment: str


def parse_review(fields: Mapping[str, str], rubric: Rubric) -> ReviewForm:
    decision = fields.get("decision", "")
    if decision not in {d.value for d in Decision}:
        raise InvalidReview("decision", "choose accept or request changes")
    scores: dict[str, dict[str, Any]] = {}
    for key, _label in rubric:
        raw = fields.get(f"score.{key}", "")
        if raw not in {"0", "1", "2"}:
            raise InvalidReview(f"score.{key}", "score each criterion 0, 1 or 2")
        comment = fields.get(f"comment.{key}", "").strip()
        if len(comment) > MAX_REVIEW_COMMENT:
            raise InvalidReview(f"comment.{key}", "comment too long")
        scores[key] = {"score": int(raw), "comment": comment}
    comment = fields.get("comment", "").strip()
    if len(comment) > MAX_REVIEW_COMMENT:
        raise InvalidReview("comment", f"longer than {MAX_REVIEW_COMMENT} characters")
    if decision == Decision.changes_requested and not comment:
        raise InvalidReview("comment", "say what to change")
    return ReviewForm(decision, scores, comment)
