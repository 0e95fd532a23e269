"""The instructor's review queue and decisions."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.grading import case_reviews, round_reviews, submissions
from app.grading import queue as review_queue
from app.grading.code_queue import code_submissions
from app.grading.revisions.queue import waiting_revisions
from app.grading.submission_routes import submission_context
from app.web.access import can_review_work_of
from app.web.deps import InstructorDep, SessionDep, SubmissionDep
from app.web.forms import FormDep
from app.web.templating import templates
from drills.core.catalogue import describe
from drills.core.registry import all_drills

router = APIRouter(tags=["reviews"], include_in_schema=False)


@router.get("/reviews", response_class=HTMLResponse)
def review_queue_page(
    request: Request,
    session: SessionDep,
    user: InstructorDep,
    drill: str = "",
    learner: str = "",
) -> HTMLResponse:
    rows = review_queue.pending_submissions(
        session, reviewer=user, drill_slug=drill, username=learner
    )
    learners = review_queue.learners_reviewed_by(session, reviewer=user)
    context = {
        "rows": rows,
        "drills": [describe(d) for d in all_drills()],
        "learners": learners,
        "filters": {"drill": drill, "learner": learner},
        "case_rows": case_reviews.unreviewed_cases(session, reviewer=user),
        "round_rows": round_reviews.unreviewed_rounds(session, reviewer=user),
        "revision_rows": waiting_revisions(session, reviewer=user),
        "code_rows": code_submissions(session, reviewer=user),
    }
    return templates.TemplateResponse(request, "pages/reviews.html", context)


@router.post("/submissions/{submission_id}/reviews", response_model=None)
def review_submission(
    request: Request,
    submission: SubmissionDep,
    fields: FormDep,
    session: SessionDep,
    user: InstructorDep,
) -> Response:
    if not can_review_work_of(session, user, submission.learner_id):
        return Response("Only the learner's instructor can review this.", status_code=403)
    try:
        submissions.record_review(session, submission=submission, reviewer=user, fields=fields)
    except submissions.InvalidSubmission as error:
        context = submission_context(session, submission=submission, user=user)
        context |= {"review_form": fields, "review_errors": error.errors}
        status = 409 if isinstance(error, submissions.SubmissionConflict) else 422
        return templates.TemplateResponse(
            request, "pages/submission.html", context, status_code=status
        )
    return RedirectResponse(f"/submissions/{submission.id}#next-in-queue", status_code=303)
