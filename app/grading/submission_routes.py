"""Learners submit evidence and follow its review; the progress page."""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session

from app.accounts.models import User
from app.grading import queue as review_queue
from app.grading import submissions
from app.grading.models import RUBRIC, Submission, SubmissionStatus
from app.grading.saved_comments import saved_comments_of
from app.runs import run_comparison
from app.runs.models import Attempt
from app.runs.views import attempt_context, drill_page_context, submission_versions, submit_context
from app.web.access import can_review_work_of
from app.web.deps import CurrentUser, DrillDep, SessionDep, SubmissionDep
from app.web.forms import FormDep
from app.web.templating import templates
from drills.core.catalogue import describe
from drills.core.registry import get_drill

router = APIRouter(tags=["submissions"], include_in_schema=False)


@router.post("/drills/{slug}/submissions", response_model=None)
def submit_evidence(
    request: Request, drill: DrillDep, fields: FormDep, session: SessionDep, user: CurrentUser
) -> Response:
    texts = {name: fields.get(name, "") for name in submissions.EXPLANATION_FIELDS}
    submission_request = submissions.SubmissionRequest(
        failed_attempt_id=fields.get("failed_attempt_id", ""),
        fixed_attempt_id=fields.get("fixed_attempt_id", ""),
        texts=texts,
    )
    try:
        submission = submissions.submit(
            session, drill=drill, learner=user, request=submission_request
        )
    except submissions.InvalidSubmission as error:
        context = drill_page_context(session, drill=drill, user=user)
        context |= {
            "form": {"knobs": {}, "seed": 0},
            "errors": {},
            "submission_draft": texts,
            "submission_errors": error.errors,
            "chosen_runs": _chosen(fields),
        }
        status = 409 if isinstance(error, submissions.SubmissionConflict) else 422
        return templates.TemplateResponse(request, "pages/drill.html", context, status_code=status)
    return RedirectResponse(f"/submissions/{submission.id}", status_code=303)


def _chosen(fields: dict[str, str]) -> dict[str, str]:
    return {name: fields.get(name, "") for name in ("failed_attempt_id", "fixed_attempt_id")}


@router.get("/drills/{slug}/submit-evidence", response_class=HTMLResponse)
def submit_section(
    request: Request, drill: DrillDep, session: SessionDep, user: CurrentUser
) -> HTMLResponse:
    """The submit section as it stands now: refreshed when a run ends, so a finished run that
    shows the failure (or the fix) unlocks the form without a reload."""
    context = submit_context(session, drill=drill, user=user)
    return templates.TemplateResponse(request, "partials/submit_evidence.html", context)


@router.get("/drills/{slug}/submit-runs", response_class=HTMLResponse)
def submit_runs(
    request: Request, drill: DrillDep, session: SessionDep, user: CurrentUser
) -> HTMLResponse:
    """Only the two run pickers of a form being written (the typed text stays as it is), with
    the runs the learner had picked still picked."""
    chosen = _chosen(dict(request.query_params))
    context = submit_context(session, drill=drill, user=user, chosen=chosen)
    return templates.TemplateResponse(request, "partials/submit_runs.html", context)


def _evidence(session: Session, attempt_id: int) -> dict[str, Any]:
    attempt = session.get(Attempt, attempt_id)
    assert attempt is not None
    return attempt_context(session, attempt)


def submission_context(session: Session, *, submission: Submission, user: User) -> dict[str, Any]:
    learner = session.get(User, submission.learner_id)
    versions = submissions.history(
        session, learner_id=submission.learner_id, drill_slug=submission.drill_slug
    )
    reviewer = can_review_work_of(session, user, submission.learner_id)
    failed = _evidence(session, submission.failed_attempt_id)
    fixed = _evidence(session, submission.fixed_attempt_id)
    pair_label, pair_runs = run_comparison.pair(
        failed=failed["attempt"], failed_series=failed["series"], fixed=fixed["attempt"]
    )
    context = {
        "submission": submission,
        "learner": learner,
        "drill": describe(get_drill(submission.drill_slug)),
        "failed": failed,
        "fixed": fixed,
        "pair_label": pair_label,
        "pair_runs": pair_runs,
        "versions": submission_versions(session, versions),
        "rubric": RUBRIC,
        "rubric_labels": RUBRIC,
        "can_review": reviewer and submission.status == SubmissionStatus.pending,
        "review_form": {},
        "review_errors": {},
        # Once decided, its reviewer goes on to the next item in one click.
        "decided": reviewer and submission.status != SubmissionStatus.pending,
        "next_item": review_queue.next_in_queue(session, reviewer=user) if reviewer else None,
        "saved_comments": saved_comments_of(session, owner_id=user.saved_id) if reviewer else [],
    }
    return context


@router.get("/submissions/{submission_id}", response_class=HTMLResponse)
def submission_page(
    request: Request, submission: SubmissionDep, session: SessionDep, user: CurrentUser
) -> HTMLResponse:
    context = submission_context(session, submission=submission, user=user)
    return templates.TemplateResponse(request, "pages/submission.html", context)
