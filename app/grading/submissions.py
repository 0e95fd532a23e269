"""Evidence submissions: a failed and a fixed attempt of one drill plus the explain-back, and the
instructor's reviews of them. Keyword-only functions over a Session."""

from dataclasses import dataclass

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.accounts.models import MAX_ROW_ID, User
from app.core.limits import MAX_SUBMISSION_TEXT
from app.core.whole_numbers import whole_number
from app.grading.models import RUBRIC, Review, Submission, SubmissionStatus
from app.grading.rubric import InvalidReview, store_decision_once
from app.grading.saved_comments import parse_review_with_saved
from app.runs.models import Attempt, AttemptStatus, drill_page_runs
from app.web.field_errors import ErrorCollector, FieldErrors
from drills.core.contract import Drill

EXPLANATION_FIELDS = ("mechanism", "right_tool", "wrong_tool", "next_check")


class InvalidSubmission(FieldErrors):
    """Fields of a submission (or of a review of one) are wrong; `errors` names each."""


class SubmissionConflict(InvalidSubmission):
    """The request contradicts a decision already stored (answered 409, not 422): a version
    that is still pending, a version already reviewed, or another request that stored the same
    version or decision a moment earlier (the unique constraints decide the race)."""


def shows_the_failure(drill: Drill, attempt: Attempt) -> bool:
    if attempt.status != AttemptStatus.succeeded:
        return attempt.final  # a run that ended in an error or a limit is failed evidence
    return drill.healthy is not None and attempt.observed_hypothesis != drill.healthy


def shows_the_fix(drill: Drill, attempt: Attempt) -> bool:
    healthy = drill.healthy is None or attempt.observed_hypothesis == drill.healthy
    return attempt.status == AttemptStatus.succeeded and healthy


def candidates(
    session: Session, *, drill: Drill, learner_id: int
) -> tuple[list[Attempt], list[Attempt]]:
    """The learner's finished attempts of the drill that can serve as (failed, fixed) evidence."""
    attempts = session.exec(
        select(Attempt)
        .where(
            Attempt.learner_id == learner_id,
            Attempt.drill_slug == drill.slug,
            drill_page_runs(),
        )
        .order_by(col(Attempt.id).desc())
    ).all()
    failed = [a for a in attempts if shows_the_failure(drill, a)]
    fixed = [a for a in attempts if shows_the_fix(drill, a)]
    return failed, fixed


def history(session: Session, *, learner_id: int, drill_slug: str) -> list[Submission]:
    """Every version, newest first."""
    return list(
        session.exec(
            select(Submission)
            .where(Submission.learner_id == learner_id, Submission.drill_slug == drill_slug)
            .order_by(col(Submission.version).desc())
        ).all()
    )


def reviews_of(session: Session, *, submission_id: int) -> list[Review]:
    return list(
        session.exec(
            select(Review).where(Review.submission_id == submission_id).order_by(col(Review.id))
        ).all()
    )


@dataclass(frozen=True)
class SubmissionRequest:
    failed_attempt_id: str
    fixed_attempt_id: str
    texts: dict[str, str]


def _attempt(session: Session, raw_id: str, *, field: str, learner: User, drill: Drill) -> Attempt:
    row_id = whole_number(raw_id, maximum=MAX_ROW_ID)
    attempt = session.get(Attempt, row_id) if row_id else None
    if (
        attempt is None
        or attempt.learner_id != learner.id
        or attempt.drill_slug != drill.slug
        or not attempt.is_drill_page_run  # a case's or round's run is evidence of it only
    ):
        raise InvalidSubmission(field, f"pick one of your own attempts of {drill.title!r}")
    return attempt


def submit(
    session: Session, *, drill: Drill, learner: User, request: SubmissionRequest
) -> Submission:
    assert learner.id is not None
    versions = history(session, learner_id=learner.id, drill_slug=drill.slug)
    if versions and versions[0].status == SubmissionStatus.pending:
        raise SubmissionConflict("submission", "your last submission is still waiting for review")
    problems = ErrorCollector()
    # The two runs are checked alike: each must be the learner's and show what its slot says.
    runs: dict[str, Attempt] = {}
    for field, raw, shows, wrong in (
        (
            "failed_attempt_id",
            request.failed_attempt_id,
            shows_the_failure,
            "does not show the failure: pick a broken run",
        ),
        (
            "fixed_attempt_id",
            request.fixed_attempt_id,
            shows_the_fix,
            "does not show a healthy run: pick the fixed one",
        ),
    ):
        with problems.checking():
            attempt = _attempt(session, raw, field=field, learner=learner, drill=drill)
            if not shows(drill, attempt):
                raise InvalidSubmission(field, f"attempt {attempt.id} {wrong}")
            runs[field] = attempt
    texts = {name: request.texts.get(name, "").strip() for name in EXPLANATION_FIELDS}
    for name, text in texts.items():
        if not text:
            problems.add(name, "required")
        elif len(text) > MAX_SUBMISSION_TEXT:
            problems.add(name, f"longer than {MAX_SUBMISSION_TEXT} characters")
    problems.raise_if_any(InvalidSubmission)
    failed, fixed = runs["failed_attempt_id"], runs["fixed_attempt_id"]
    assert failed.id is not None and fixed.id is not None
    submission = Submission(
        learner_id=learner.id,
        drill_slug=drill.slug,
        version=versions[0].version + 1 if versions else 1,
        failed_attempt_id=failed.id,
        fixed_attempt_id=fixed.id,
        mechanism=texts["mechanism"],
        right_tool=texts["right_tool"],
        wrong_tool=texts["wrong_tool"],
        next_check=texts["next_check"],
    )
    session.add(submission)
    try:
        session.commit()
    except IntegrityError:  # uq_submission_version: a simultaneous request stored it first
        session.rollback()
        raise SubmissionConflict(
            "submission", "this version was just submitted by another request"
        ) from None
    session.refresh(submission)
    return submission


def record_review(
    session: Session,
    *,
    submission: Submission,
    reviewer: User,
    fields: dict[str, str],
) -> Review:
    if submission.status != SubmissionStatus.pending:
        raise SubmissionConflict("decision", "this version has already been reviewed")
    assert submission.id is not None and reviewer.id is not None
    try:
        form, keep = parse_review_with_saved(
            session, reviewer_id=reviewer.id, fields=fields, rubric=RUBRIC
        )
    except InvalidReview as error:
        raise InvalidSubmission.of(error.errors) from None
    review = Review(
        submission_id=submission.id,
        instructor_id=reviewer.id,
        decision=form.decision,
        scores=form.scores,
        comment=form.comment,
    )
    submission.status = form.decision
    # uq_review_submission: of two decisions sent at once, one is stored.
    store_decision_once(
        session,
        [review, submission, *keep],
        SubmissionConflict("decision", "this version has already been reviewed"),
    )
    session.refresh(review)
    return review
