"""The revise-and-resubmit loop as a service (app/grading/revisions/service.py): who may
revise when, that a revision is a new numbered row and never an overwrite, that the draw and
score stay, and that a review applies only to the latest revision, once."""

from collections.abc import Callable

import pytest
from sqlalchemy import Engine
from sqlmodel import Session, col, func, select

from app.accounts.models import Role, User
from app.cases.models import CASE_RUBRIC, CaseAttempt
from app.diagnosis.form import InvalidCaseInput
from app.grading.queue import next_in_queue
from app.grading.revisions import service
from app.grading.revisions.models import DiagnosisRevision
from app.grading.revisions.queue import waiting_revisions
from app.grading.revisions.service import RevisionRefused, RevisionReviewConflict, Subject
from app.grading.rubric import InvalidReview
from app.practice.round_models import DiagnosisRound
from tests.app.factories import add_case_attempt, add_cohort, add_round, add_user
from tests.app.revision_factories import (
    REVIEW_FORM,
    REVISION_FORM,
    add_case_review,
    add_revision,
    add_round_review,
)

# The factories' case attempt and round, with the keys of their case set (cause-2 is
# head-not-optimized; the leading hypothesis first sent is backbone-not-optimized).
FIELDS = REVISION_FORM | {"alternatives": ["head-not-optimized"]}


def subject_of(engine: Engine, kind: str, row_id: int) -> Subject:
    with Session(engine) as session:
        if kind == "case":
            case_attempt = session.get(CaseAttempt, row_id)
            assert case_attempt is not None
            return service.case_subject(session, case_attempt)
        diagnosis_round = session.get(DiagnosisRound, row_id)
        assert diagnosis_round is not None
        return service.round_subject(session, diagnosis_round)


Setup = Callable[[str | None], Subject]


@pytest.fixture
def people(engine: Engine) -> dict[str, int]:
    instructor = add_user(engine, "ida", Role.instructor)
    learner = add_user(engine, "lee")
    add_cohort(engine, instructor, name="Autumn", code="ABCDEFGH", learners=[learner])
    return {"instructor": instructor, "learner": learner}


@pytest.fixture(params=["case", "round"])
def reviewed(request: pytest.FixtureRequest, engine: Engine, people: dict[str, int]) -> Setup:
    """A revealed case attempt or an answered round of the learner, reviewed with the given
    decision (None: not reviewed yet); its subject."""

    def make(decision: str | None) -> Subject:
        if request.param == "case":
            row_id, _ = add_case_attempt(engine, people["learner"])
            if decision:
                add_case_review(engine, row_id, people["instructor"], decision=decision)
        else:
            row_id = add_round(engine, people["learner"])
            if decision:
                add_round_review(engine, row_id, people["instructor"], decision=decision)
        return subject_of(engine, request.param, row_id)

    return make


def submit(
    engine: Engine, subject: Subject, number: int | str, **changes: object
) -> DiagnosisRevision:
    with Session(engine) as session:
        thread = service.thread_of(session, subject)
        fields = FIELDS | {"number": str(number)} | changes
        return service.submit_revision(session, thread, fields)


def review(engine: Engine, subject: Subject, number: int, decision: str, reviewer: int) -> None:
    with Session(engine) as session:
        thread = service.thread_of(session, subject)
        user = session.get(User, reviewer)
        assert user is not None
        fields = REVIEW_FORM | {"decision": decision}
        service.review_revision(session, thread, number=number, reviewer=user, fields=fields)


def revisions(engine: Engine) -> list[tuple[int, str, str | None]]:
    with Session(engine) as session:
        rows = session.exec(select(DiagnosisRevision).order_by(col(DiagnosisRevision.number))).all()
        return [(row.number, row.diagnosis["intervention"], row.decision) for row in rows]


def count(engine: Engine) -> int:
    with Session(engine) as session:
        return session.exec(select(func.count()).select_from(DiagnosisRevision)).one()


@pytest.mark.parametrize(
    ("decision", "why"),
    [(None, "has not been reviewed yet"), ("accepted", "accepted this diagnosis")],
)
def test_no_revision_unless_changes_are_asked_for(
    engine: Engine, reviewed: Setup, decision: str | None, why: str
) -> None:
    subject = reviewed(decision)
    with pytest.raises(RevisionRefused, match=why):
        submit(engine, subject, 1)
    assert count(engine) == 0


def test_a_revision_is_words_only_and_keeps_the_first_leading_hypothesis(
    engine: Engine, reviewed: Setup
) -> None:
    subject = reviewed("changes_requested")

    def record() -> tuple[object, object]:
        with Session(engine) as session:
            row = (
                session.get(CaseAttempt, subject.case_attempt_id)
                if subject.case_attempt_id
                else session.get(DiagnosisRound, subject.round_id)
            )
            assert row is not None
            return row.diagnosis, row.score

    stored_before = record()
    # A leading hypothesis sent with the revision is not taken: it was scored before the reveal.
    revision = submit(engine, subject, 1, leading="head-not-optimized")
    assert revision.number == 1
    assert revision.diagnosis == {
        "leading": "backbone-not-optimized",
        "alternatives": ["head-not-optimized"],
        "first_test": "update-sizes",
        "intervention": REVISION_FORM["intervention"],
        "confirmation": REVISION_FORM["confirmation"],
    }
    assert revision.note == REVISION_FORM["note"] and revision.decision is None
    assert record() == stored_before  # the draw's record is untouched


def test_bad_fields_are_named_and_nothing_is_stored(engine: Engine, reviewed: Setup) -> None:
    subject = reviewed("changes_requested")
    with pytest.raises(InvalidCaseInput) as raised:
        submit(
            engine,
            subject,
            1,
            alternatives=["backbone-not-optimized"],  # the leading hypothesis itself
            first_test="no-such-test",
            intervention=" ",
            note="x" * 5000,
        )
    assert set(raised.value.errors) == {"alternatives", "first_test", "intervention", "note"}
    with pytest.raises(InvalidCaseInput, match="which revision"):
        submit(engine, subject, "²")
    assert count(engine) == 0


def test_one_revision_per_request_for_changes(engine: Engine, reviewed: Setup) -> None:
    subject = reviewed("changes_requested")
    submit(engine, subject, 1)
    # The same form sent again (a double click, a second tab): refused, one row.
    with pytest.raises(RevisionRefused, match="Revision 1 was sent already"):
        submit(engine, subject, 1)
    # The next number while revision 1 waits for its review: refused too.
    with pytest.raises(RevisionRefused, match="Revision 1 is waiting for your instructor"):
        submit(engine, subject, 2)
    assert count(engine) == 1


def test_two_copies_sent_at_once_store_one(engine: Engine, reviewed: Setup) -> None:
    """Both read the thread before either stored: the unique (attempt, number) decides."""
    subject = reviewed("changes_requested")
    with Session(engine) as late, Session(engine) as first:
        late_thread = service.thread_of(late, subject)
        first_thread = service.thread_of(first, subject)
        service.submit_revision(first, first_thread, FIELDS | {"number": "1"})
        with pytest.raises(RevisionRefused, match="was sent already"):
            service.submit_revision(late, late_thread, FIELDS | {"number": "1"})
    assert count(engine) == 1


def test_the_loop_keeps_every_revision_and_ends_on_acceptance(
    engine: Engine, reviewed: Setup, people: dict[str, int]
) -> None:
    subject = reviewed("changes_requested")
    submit(engine, subject, 1, intervention="first try")
    review(engine, subject, 1, "changes_requested", people["instructor"])
    # A form written before that review (for revision 1) is refused, not stored as revision 2.
    with pytest.raises(RevisionRefused, match="was sent already"):
        submit(engine, subject, 1)
    with pytest.raises(RevisionRefused, match="next one is revision 2"):
        submit(engine, subject, 3)
    submit(engine, subject, 2, intervention="second try")
    review(engine, subject, 2, "accepted", people["instructor"])
    assert revisions(engine) == [
        (1, "first try", "changes_requested"),
        (2, "second try", "accepted"),
    ]
    with Session(engine) as session:
        thread = service.thread_of(session, subject)
    assert thread.decision == "accepted" and not thread.open_to_revise
    with pytest.raises(RevisionRefused, match="accepted this diagnosis"):
        submit(engine, subject, 3)


def test_a_review_of_a_stale_revision_is_refused(
    engine: Engine, reviewed: Setup, people: dict[str, int]
) -> None:
    subject = reviewed("changes_requested")
    submit(engine, subject, 1, intervention="first try")
    review(engine, subject, 1, "changes_requested", people["instructor"])
    submit(engine, subject, 2, intervention="second try")
    # A second instructor's tab, still on revision 1, sends its review now.
    with pytest.raises(RevisionReviewConflict, match="no longer the latest.*review revision 2"):
        review(engine, subject, 1, "accepted", people["instructor"])
    assert revisions(engine) == [(1, "first try", "changes_requested"), (2, "second try", None)]
    with pytest.raises(LookupError):
        review(engine, subject, 3, "accepted", people["instructor"])


def test_a_revision_is_reviewed_once(
    engine: Engine, reviewed: Setup, people: dict[str, int]
) -> None:
    subject = reviewed("changes_requested")
    submit(engine, subject, 1)
    with Session(engine) as late, Session(engine) as first:
        # Both tabs read the revision while it waited.
        late_thread = service.thread_of(late, subject)
        first_thread = service.thread_of(first, subject)
        reviewer = first.get(User, people["instructor"])
        assert reviewer is not None
        fields = REVIEW_FORM | {"decision": "accepted"}
        service.review_revision(first, first_thread, number=1, reviewer=reviewer, fields=fields)
        late_reviewer = late.get(User, people["instructor"])
        assert late_reviewer is not None
        changes = REVIEW_FORM | {"decision": "changes_requested"}
        with pytest.raises(RevisionReviewConflict, match="already been reviewed"):
            service.review_revision(
                late, late_thread, number=1, reviewer=late_reviewer, fields=changes
            )
    assert revisions(engine)[0][2] == "accepted"
    # Read afresh, the same refusal comes from the stored decision.
    with pytest.raises(RevisionReviewConflict, match="already been reviewed"):
        review(engine, subject, 1, "changes_requested", people["instructor"])


def test_a_bad_review_form_stores_nothing(
    engine: Engine, reviewed: Setup, people: dict[str, int]
) -> None:
    subject = reviewed("changes_requested")
    submit(engine, subject, 1)
    with Session(engine) as session:
        thread = service.thread_of(session, subject)
        reviewer = session.get(User, people["instructor"])
        assert reviewer is not None
        with pytest.raises(InvalidReview) as raised:
            service.review_revision(
                session,
                thread,
                number=1,
                reviewer=reviewer,
                fields={"decision": "changes_requested"},
            )
    assert not isinstance(raised.value, RevisionReviewConflict)  # a 422, not a 409
    assert raised.value.errors["comment"] == "say what to change"
    assert set(raised.value.errors) == {"comment"} | {f"score.{key}" for key, _ in CASE_RUBRIC}
    assert revisions(engine)[0][2] is None


def test_a_waiting_revision_is_in_its_instructors_queue_only(
    engine: Engine, reviewed: Setup, people: dict[str, int]
) -> None:
    other = add_user(engine, "otto", Role.instructor)
    admin = add_user(engine, "ada", Role.admin)
    subject = reviewed("changes_requested")
    revision = submit(engine, subject, 1)
    with Session(engine) as session:
        users = {name: session.get(User, user_id) for name, user_id in (
            ("ida", people["instructor"]), ("otto", other), ("ada", admin)
        )}  # fmt: skip
        seen = {
            name: [row.revision.id for row in waiting_revisions(session, reviewer=user)]
            for name, user in users.items()
            if user is not None
        }
        assert seen == {"ida": [revision.id], "otto": [], "ada": [revision.id]}
        first = waiting_revisions(session, reviewer=users["ida"])[0]  # type: ignore[arg-type]
        assert first.href.endswith("#revisions") and "lee" in first.learner.username
        # The first review was written before the revision, so the revision is the next item.
        item = next_in_queue(session, reviewer=users["ida"])  # type: ignore[arg-type]
        assert item is not None and item.href == first.href
        assert "revision 1 of" in item.title
    review(engine, subject, 1, "accepted", people["instructor"])
    with Session(engine) as session:
        ida = session.get(User, people["instructor"])
        assert ida is not None and waiting_revisions(session, reviewer=ida) == []


def test_a_revision_revises_exactly_one_thing(engine: Engine, people: dict[str, int]) -> None:
    """The CHECK constraint: a row for both a case attempt and a round, or for neither, is
    refused by the database itself."""
    case_attempt_id, _ = add_case_attempt(engine, people["learner"])
    round_id = add_round(engine, people["learner"])
    with pytest.raises(Exception, match="(?i)check"):
        add_revision(engine, people["learner"], case_attempt_id=case_attempt_id, round_id=round_id)
    with pytest.raises(Exception, match="(?i)check"):
        add_revision(engine, people["learner"])
    assert count(engine) == 0
