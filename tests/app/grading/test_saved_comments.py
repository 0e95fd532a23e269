"""An instructor's saved review comments: kept per instructor, edited and deleted, capped in
count and length, and used in the three reviews (appended server-side, or saved from one)."""

from collections.abc import Iterator
from dataclasses import dataclass
from typing import cast

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import Engine
from sqlmodel import Session, col, select

from app.accounts.models import Role
from app.cases.models import CASE_RUBRIC, CaseReview
from app.core.limits import MAX_SAVED_COMMENT, MAX_SAVED_COMMENTS
from app.grading import saved_comments
from app.grading.models import Review, SavedComment
from app.models.time import utcnow
from app.practice.round_models import RoundReview
from tests.app.factories import (
    RUBRIC_KEYS,
    add_attempt,
    add_case_attempt,
    add_cohort,
    add_round,
    add_submission,
    add_user,
    engine_of,
    signed_in,
    snapshot,
)

LIST = "/reviews/comments"


@dataclass
class Term:
    engine: Engine
    instructor: TestClient  # runs the learner's cohort
    other: TestClient  # another instructor, with a cohort of their own
    learner: TestClient
    ids: dict[str, int]


@pytest.fixture
def term(anonymous: TestClient) -> Iterator[Term]:
    engine = engine_of(anonymous)
    app = anonymous.app
    teacher = add_user(engine, "ida", Role.instructor)
    other = add_user(engine, "otto", Role.instructor)
    learner = add_user(engine, "lee")
    add_cohort(engine, teacher, name="Autumn", code="AAAA2222", learners=[learner])
    add_cohort(engine, other, name="Spring", code="BBBB3333")
    failed = add_attempt(engine, learner, fixed=False)
    fixed = add_attempt(engine, learner, fixed=True)
    case_attempt, _ = add_case_attempt(engine, learner)
    ids = {
        "teacher": teacher,
        "other": other,
        "submission": add_submission(engine, learner, failed, fixed),
        "case": case_attempt,
        "round": add_round(engine, learner),
    }
    instructor, other_instructor, learner_client = (
        signed_in(app, name)  # type: ignore[arg-type]
        for name in ("ida", "otto", "lee")
    )
    yield Term(engine, instructor, other_instructor, learner_client, ids=ids)
    for client in (instructor, other_instructor, learner_client):
        client.close()


def saved(engine: Engine, owner_id: int) -> list[str]:
    with Session(engine) as session:
        rows = session.exec(
            select(SavedComment)
            .where(SavedComment.owner_id == owner_id)
            .order_by(col(SavedComment.id))
        )
        return [row.text for row in rows]


def add(client: TestClient, text: str) -> int:
    return client.post(LIST, data={"text": text}, follow_redirects=False).status_code


def comment_id(engine: Engine, text: str) -> int:
    with Session(engine) as session:
        row = session.exec(select(SavedComment).where(SavedComment.text == text)).one()
        assert row.id is not None
        return row.id


def test_an_instructor_keeps_edits_and_deletes_their_own_list(term: Term) -> None:
    assert add(term.instructor, "  Name the state the bug changes.  ") == 303
    assert add(term.instructor, "Show the run that proves the fix.") == 303
    teacher = term.ids["teacher"]
    assert saved(term.engine, teacher) == [
        "Name the state the bug changes.",
        "Show the run that proves the fix.",
    ]
    page = term.instructor.get(LIST).text
    assert "Name the state the bug changes." in page and "(2 of 50)" in page
    first = comment_id(term.engine, "Name the state the bug changes.")
    edited = term.instructor.post(
        f"{LIST}/{first}", data={"text": "Name the tensor the bug changes."}, follow_redirects=False
    )
    assert edited.status_code == 303
    gone = term.instructor.post(f"{LIST}/{first}", data={"delete": "yes"}, follow_redirects=False)
    assert gone.status_code == 303
    assert saved(term.engine, teacher) == ["Show the run that proves the fix."]
    # Deleted once: a second press of Delete finds nothing.
    again = term.instructor.post(f"{LIST}/{first}", data={"delete": "yes"})
    assert again.status_code == 404


def test_the_list_is_its_owners_alone(term: Term) -> None:
    add(term.instructor, "Ida's phrasing.")
    mine = comment_id(term.engine, "Ida's phrasing.")
    before = snapshot(term.engine)
    assert "Ida&#39;s phrasing." not in term.other.get(LIST).text
    # Another instructor can neither edit nor delete it: answered as a comment that is not there.
    for data in ({"text": "Otto's now."}, {"delete": "yes"}):
        response = term.other.post(f"{LIST}/{mine}", data=data)
        assert response.status_code == 404 and f"No saved comment {mine}." in response.text
    # A learner has no list at all.
    assert term.learner.get(LIST).status_code == 403
    assert term.learner.post(LIST, data={"text": "Mine."}).status_code == 403
    assert snapshot(term.engine) == before


def test_empty_long_duplicate_and_one_too_many_are_refused_whole(term: Term) -> None:
    before = snapshot(term.engine)
    empty = term.instructor.post(LIST, data={"text": "   "})
    assert empty.status_code == 422 and "it is empty" in empty.text
    long = term.instructor.post(LIST, data={"text": "x" * (MAX_SAVED_COMMENT + 1)})
    assert long.status_code == 422
    assert f"at most {MAX_SAVED_COMMENT} characters; this one has {MAX_SAVED_COMMENT + 1}" in (
        long.text
    )
    assert snapshot(term.engine) == before
    assert add(term.instructor, "x" * MAX_SAVED_COMMENT) == 303  # the cap itself is allowed
    duplicate = term.instructor.post(LIST, data={"text": "x" * MAX_SAVED_COMMENT})
    assert duplicate.status_code == 409 and "in your list already" in duplicate.text
    for number in range(1, MAX_SAVED_COMMENTS):
        assert add(term.instructor, f"Comment {number}.") == 303
    full = term.instructor.post(LIST, data={"text": "One more."})
    assert full.status_code == 409 and f"holds {MAX_SAVED_COMMENTS} saved comments" in full.text
    assert len(saved(term.engine, term.ids["teacher"])) == MAX_SAVED_COMMENTS
    # An edit into another comment's text is a duplicate too; an empty edit changes nothing.
    first = comment_id(term.engine, "Comment 1.")
    clash = term.instructor.post(f"{LIST}/{first}", data={"text": "Comment 2."})
    assert clash.status_code == 409
    blank = term.instructor.post(f"{LIST}/{first}", data={"text": ""})
    assert blank.status_code == 422 and 'aria-invalid="true"' in blank.text
    assert "Comment 1." in saved(term.engine, term.ids["teacher"])


def test_a_double_submit_keeps_one_copy(term: Term) -> None:
    assert add(term.instructor, "Twice.") == 303
    assert add(term.instructor, "Twice.") == 409
    assert saved(term.engine, term.ids["teacher"]) == ["Twice."]


def review_fields(keys: tuple[str, ...], **extra: str) -> dict[str, str]:
    return {"decision": "changes_requested", **{f"score.{key}": "1" for key in keys}, **extra}


REVIEWS: dict[str, tuple[str, tuple[str, ...], type[Review | CaseReview | RoundReview]]] = {
    "submission": ("/submissions/{}/reviews", RUBRIC_KEYS, Review),
    "case": ("/cases/attempts/{}/review", tuple(key for key, _ in CASE_RUBRIC), CaseReview),
    "round": ("/practice/rounds/{}/review", tuple(key for key, _ in CASE_RUBRIC), RoundReview),
}


def stored_comment(engine: Engine, model: type[Review | CaseReview | RoundReview]) -> str:
    with Session(engine) as session:
        review = cast(Review | CaseReview | RoundReview, session.exec(select(model)).one())
        return review.comment


@pytest.mark.parametrize("kind", sorted(REVIEWS))
def test_a_chosen_saved_comment_is_appended_to_the_review(term: Term, kind: str) -> None:
    path, keys, model = REVIEWS[kind]
    url = path.format(term.ids[kind])
    add(term.instructor, "Show the run that proves the fix.")
    chosen = comment_id(term.engine, "Show the run that proves the fix.")
    page = term.instructor.get(url.rsplit("/", 1)[0]).text
    assert f'<option value="{chosen}" data-text="Show the run that proves the fix."' in page
    fields = review_fields(keys, comment="Good start.", saved_comment=str(chosen))
    assert term.instructor.post(url, data=fields, follow_redirects=False).status_code == 303
    assert stored_comment(term.engine, model) == "Good start.\n\nShow the run that proves the fix."


@pytest.mark.parametrize("kind", sorted(REVIEWS))
def test_someone_elses_saved_comment_is_refused_and_nothing_is_stored(
    term: Term, kind: str
) -> None:
    path, keys, _ = REVIEWS[kind]
    url = path.format(term.ids[kind])
    add(term.other, "Otto's phrasing.")
    others = comment_id(term.engine, "Otto's phrasing.")
    before = snapshot(term.engine)
    for chosen in (str(others), "99999", "not-a-number"):
        fields = review_fields(keys, comment="", saved_comment=chosen)
        response = term.instructor.post(url, data=fields)
        assert response.status_code == 422
        assert "Choose one of your own saved comments" in response.text
        # Every problem at once: the empty comment a change request needs is named too.
        assert "say what to change" in response.text
    assert snapshot(term.engine) == before


@pytest.mark.parametrize("kind", sorted(REVIEWS))
def test_ticking_save_keeps_the_reviews_comment_with_the_review(term: Term, kind: str) -> None:
    path, keys, model = REVIEWS[kind]
    url = path.format(term.ids[kind])
    fields = review_fields(keys, comment="Check the labels first.", save_comment="yes")
    assert term.instructor.post(url, data=fields, follow_redirects=False).status_code == 303
    assert saved(term.engine, term.ids["teacher"]) == ["Check the labels first."]
    assert stored_comment(term.engine, model) == "Check the labels first."


def test_saving_from_a_review_to_a_full_list_stores_neither(term: Term) -> None:
    for number in range(MAX_SAVED_COMMENTS):
        add(term.instructor, f"Comment {number}.")
    url = f"/submissions/{term.ids['submission']}/reviews"
    before = snapshot(term.engine)
    fields = review_fields(RUBRIC_KEYS, comment="A new one.", save_comment="yes")
    response = term.instructor.post(url, data=fields)
    assert response.status_code == 422 and "Or untick the box." in response.text
    assert snapshot(term.engine) == before
    # A comment already in the list is not a new one: the review goes through.
    fields = review_fields(RUBRIC_KEYS, comment="Comment 3.", save_comment="yes")
    assert term.instructor.post(url, data=fields, follow_redirects=False).status_code == 303
    assert len(saved(term.engine, term.ids["teacher"])) == MAX_SAVED_COMMENTS


def test_two_saves_of_one_text_at_once_keep_one(
    term: Term, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The twin request passed the duplicate check before the first was stored: the database's
    unique (owner, digest) refuses it, and it is answered 409, not 500."""
    assert add(term.instructor, "At once.") == 303
    monkeypatch.setattr(saved_comments, "_holds", lambda *args, **kwargs: False)
    twin = term.instructor.post(LIST, data={"text": "At once."})
    assert twin.status_code == 409 and "in your list already" in twin.text
    assert saved(term.engine, term.ids["teacher"]) == ["At once."]
    # As a function, the same refusal.
    with Session(term.engine) as session, pytest.raises(saved_comments.SavedCommentConflict):
        saved_comments.add_comment(
            session, owner_id=term.ids["teacher"], text="At once.", now=utcnow()
        )


def test_a_saved_comment_is_shown_as_text_never_as_markup(term: Term) -> None:
    hostile = '"><script>alert(1)</script><b>bold</b>'
    assert add(term.instructor, hostile) == 303
    pages = [LIST, f"/submissions/{term.ids['submission']}"]
    for page in pages:
        text = term.instructor.get(page).text
        assert "<script>alert(1)" not in text and "<b>bold</b>" not in text
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
