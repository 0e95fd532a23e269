"""An instructor's saved review comments: keep, edit and delete them, and use one in a review.

A review form offers the reviewer's own list in a select beside the overall comment. Without
JavaScript the chosen comment is appended to the overall comment here, when the review is sent;
with it, static/app.js appends it in the text box at once and leaves the select empty. A
ticked "save this comment" box keeps the review's overall comment in the list, in the
review's own transaction.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, func, select

from app.accounts.models import MAX_ROW_ID
from app.core.limits import MAX_SAVED_COMMENT, MAX_SAVED_COMMENTS
from app.core.whole_numbers import whole_number
from app.grading.models import SavedComment
from app.grading.rubric import InvalidReview, ReviewForm, Rubric, parse_review
from app.web.field_errors import ErrorCollector, FieldErrors


class InvalidSavedComment(FieldErrors):
    """The text of a saved comment is empty or too long: 422."""


class SavedCommentConflict(InvalidSavedComment):
    """The list is full, or holds this text already: 409."""


FULL = (
    f"Your list holds {MAX_SAVED_COMMENTS} saved comments, the most it can: "
    "delete one you no longer use first."
)
DUPLICATE = "This comment is in your list already."
NOT_YOURS = "Choose one of your own saved comments from the list."


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def saved_comments_of(session: Session, *, owner_id: int) -> list[SavedComment]:
    """The instructor's list, oldest first (the order they built it in)."""
    query = select(SavedComment).where(SavedComment.owner_id == owner_id)
    return list(session.exec(query.order_by(col(SavedComment.id))).all())


def owned_comment(session: Session, *, owner_id: int, comment_id: int) -> SavedComment | None:
    """The saved comment if it is this instructor's; None for another's, as for a missing one."""
    comment = session.get(SavedComment, comment_id)
    return comment if comment is not None and comment.owner_id == owner_id else None


def _count(session: Session, owner_id: int) -> int:
    query = select(func.count()).select_from(SavedComment)
    return int(session.exec(query.where(SavedComment.owner_id == owner_id)).one())


def _holds(session: Session, owner_id: int, text: str, *, other_than: int | None = None) -> bool:
    query = select(SavedComment.id).where(
        SavedComment.owner_id == owner_id, SavedComment.text_sha256 == _digest(text)
    )
    if other_than is not None:
        query = query.where(col(SavedComment.id) != other_than)
    return session.exec(query).first() is not None


def _checked_text(raw: str) -> str:
    field = "text"
    text = raw.strip()
    if not text:
        raise InvalidSavedComment(field, "Write the comment to save: it is empty.")
    if len(text) > MAX_SAVED_COMMENT:
        raise InvalidSavedComment(
            field,
            f"A saved comment holds at most {MAX_SAVED_COMMENT} characters; "
            f"this one has {len(text)}.",
        )
    return text


def _commit(session: Session) -> None:
    # uq_saved_comment_owner_id: the same text sent twice at once (a double click) is kept once.
    try:
        session.commit()
    except IntegrityError:
        session.rollback()
        raise SavedCommentConflict("text", DUPLICATE) from None


def add_comment(session: Session, *, owner_id: int, text: str, now: datetime) -> SavedComment:
    checked = _checked_text(text)
    if _holds(session, owner_id, checked):
        raise SavedCommentConflict("text", DUPLICATE)
    if _count(session, owner_id) >= MAX_SAVED_COMMENTS:
        raise SavedCommentConflict("text", FULL)
    digest = _digest(checked)
    comment = SavedComment(
        owner_id=owner_id, text=checked, text_sha256=digest, created_at=now, updated_at=now
    )
    session.add(comment)
    _commit(session)
    session.refresh(comment)
    return comment


def edit_comment(session: Session, *, comment: SavedComment, text: str, now: datetime) -> None:
    checked = _checked_text(text)
    if _holds(session, comment.owner_id, checked, other_than=comment.id):
        raise SavedCommentConflict("text", DUPLICATE)
    comment.text, comment.text_sha256, comment.updated_at = checked, _digest(checked), now
    session.add(comment)
    _commit(session)


def delete_comment(session: Session, *, comment: SavedComment) -> None:
    session.delete(comment)
    session.commit()


# -- In a review ----------------------------------------------------------------------------


def _joined(typed: str, saved: str) -> str:
    return f"{typed.rstrip()}\n\n{saved}" if typed.strip() else saved


def parse_review_with_saved(
    session: Session, *, reviewer_id: int, fields: Mapping[str, str], rubric: Rubric
) -> tuple[ReviewForm, list[SavedComment]]:
    """The review form with the reviewer's chosen saved comment appended to the overall
    comment, and the row to store with the review when "save this comment" is ticked (none
    when the list holds that text already). Every problem is named in one InvalidReview."""
    problems = ErrorCollector()
    filled = dict(fields)
    chosen = filled.pop("saved_comment", "").strip()
    if chosen:
        comment_id = whole_number(chosen, maximum=MAX_ROW_ID)
        saved = (
            owned_comment(session, owner_id=reviewer_id, comment_id=comment_id)
            if comment_id
            else None
        )
        if saved is None:
            problems.add("saved_comment", NOT_YOURS)
        else:
            filled["comment"] = _joined(filled.get("comment", ""), saved.text)
    form: ReviewForm | None = None
    with problems.checking():
        form = parse_review(filled, rubric)
    keep: list[SavedComment] = []
    if form is not None and filled.get("save_comment"):
        with problems.checking():
            keep = _to_keep(session, reviewer_id, form.comment)
    problems.raise_if_any(InvalidReview)
    assert form is not None
    return form, keep


def _to_keep(session: Session, owner_id: int, comment: str) -> list[SavedComment]:
    if not comment:
        raise InvalidReview("save_comment", "Write an overall comment to save it to your list.")
    if len(comment) > MAX_SAVED_COMMENT:
        raise InvalidReview(
            "save_comment",
            f"A saved comment holds at most {MAX_SAVED_COMMENT} characters: "
            "untick the box or shorten the overall comment.",
        )
    if _holds(session, owner_id, comment):
        return []
    if _count(session, owner_id) >= MAX_SAVED_COMMENTS:
        raise InvalidReview("save_comment", f"{FULL} Or untick the box.")
    return [SavedComment(owner_id=owner_id, text=comment, text_sha256=_digest(comment))]
