"""The instructor's review queue and decisions."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import col, select

from app import submissions
from app.access import can_review_work_of, learners_of
from app.deps import InstructorDep, SessionDep, SubmissionDep
from app.forms import FormDep
from app.models import Role, Submission, SubmissionStatus, User
from app.routes.submissions import submission_context
from app.templating import templates
from drills.core.catalogue import describe
from drills.core.registry import all_drills

router = APIRouter(tags=["reviews"], include_in_schema=False)


@router.get("/reviews", response_class=HTMLResponse)
def review_queue(
    request: Request,
    session: SessionDep,
    user: InstructorDep,
    drill: str = "",
    learner: str = "",
) -> HTMLResponse:
    query = select(Submission, User).join(User, col(User.id) == col(Submission.learner_id))
    query = query.where(Submission.status == SubmissionStatus.pending)
    if user.role != Role.admin:
        query = query.where(col(Submission.learner_id).in_(learners_of(session, user)))
    if drill:
        query = query.where(Submission.drill_slug == drill)
    if learner:
        query = query.where(User.username == learner)
    rows = session.exec(query.order_by(col(Submission.created_at), col(Submission.id))).all()
    learners = sorted(
        session.exec(select(User).where(col(User.id).in_(learners_of(session, user)))).all()
        if user.role != Role.admin
        else session.exec(select(User).where(User.role == Role.learner)).all(),
        key=lambda u: u.username,
    )
    context = {
        "rows": rows,
        "drills": [describe(d) for d in all_drills()],
        "learners": learners,
        "filters": {"drill": drill, "learner": learner},
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
        context |= {"review_form": fields, "review_errors": {error.field: error.message}}
        status = 409 if isinstance(error, submissions.SubmissionConflict) else 422
        return templates.TemplateResponse(
            request, "pages/submission.html", context, status_code=status
        )
    return RedirectResponse(f"/submissions/{submission.id}", status_code=303)
