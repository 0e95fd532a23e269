"""An instructor's review of a case attempt or a round, posted from the work's own page. On a
mistake the page is rendered again by its owner (app/web/pages.py), with the form's errors."""

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import RedirectResponse, Response

from app.grading import case_reviews, round_reviews
from app.grading.rubric import InvalidReview
from app.web import pages
from app.web.access import can_review_work_of
from app.web.deps import CaseAttemptDep, InstructorDep, RoundDep, SessionDep
from app.web.forms import FormDep

router = APIRouter(tags=["reviews"], include_in_schema=False)

NOT_THEIRS = "Only the learner's instructor can review this."


@router.post("/cases/attempts/{case_attempt_id}/review", response_model=None)
def review_case(
    request: Request,
    case_attempt: CaseAttemptDep,
    fields: FormDep,
    session: SessionDep,
    user: InstructorDep,
) -> Response:
    if not can_review_work_of(session, user, case_attempt.learner_id):
        raise HTTPException(status_code=403, detail=NOT_THEIRS)
    try:
        case_reviews.record_case_review(
            session, case_attempt=case_attempt, reviewer=user, fields=fields
        )
    except InvalidReview as error:
        status = 409 if isinstance(error, case_reviews.CaseReviewConflict) else 422
        return pages.render(
            "case",
            request,
            session,
            case_attempt,
            errors=error.errors,
            form=dict(fields),
            status_code=status,
        )
    return RedirectResponse(f"/cases/attempts/{case_attempt.id}#next-in-queue", status_code=303)


@router.post("/practice/rounds/{round_id}/review", response_model=None)
def review_round(
    request: Request,
    diagnosis_round: RoundDep,
    fields: FormDep,
    session: SessionDep,
    user: InstructorDep,
) -> Response:
    if not can_review_work_of(session, user, diagnosis_round.learner_id):
        raise HTTPException(status_code=403, detail=NOT_THEIRS)
    try:
        round_reviews.record_round_review(
            session, diagnosis_round=diagnosis_round, reviewer=user, fields=fields
        )
    except InvalidReview as error:
        status = 409 if isinstance(error, round_reviews.RoundReviewConflict) else 422
        return pages.render(
            "round",
            request,
            session,
            diagnosis_round,
            errors=error.errors,
            form=dict(fields),
            status_code=status,
        )
    return RedirectResponse(f"/practice/rounds/{diagnosis_round.id}#next-in-queue", status_code=303)
