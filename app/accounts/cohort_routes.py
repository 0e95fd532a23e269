"""Instructors run cohorts; learners join them with a code."""

from datetime import datetime
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session

from app.accounts import cohorts
from app.accounts.models import Cohort
from app.assignments.views import cohort_board
from app.assignments.when import in_words
from app.cases.results import cohort_case_results
from app.exercises.cohort import cohort_exercises
from app.grading.cohort_csv import cohort_csv
from app.grading.progress import cohort_learners, progress_grid, work_links
from app.practice import items as review_items
from app.practice.results import cohort_practice
from app.web.deps import CohortDep, CurrentUser, InstructorDep, NowDep, SessionDep
from app.web.forms import FormDep
from app.web.templating import templates
from drills.core.catalogue import describe
from drills.core.registry import all_drills

router = APIRouter(tags=["cohorts"], include_in_schema=False)


@router.get("/cohorts", response_class=HTMLResponse)
def cohorts_page(request: Request, session: SessionDep, user: InstructorDep) -> HTMLResponse:
    context = {"cohorts": cohorts.cohorts_run_by(session, user=user), "errors": {}}
    return templates.TemplateResponse(request, "pages/cohorts.html", context)


@router.post("/cohorts", response_model=None)
def create_cohort(
    request: Request, fields: FormDep, session: SessionDep, user: InstructorDep
) -> Response:
    try:
        cohort = cohorts.create_cohort(session, instructor=user, name=fields.get("name", ""))
    except cohorts.InvalidCohort as error:
        context = {
            "cohorts": cohorts.cohorts_run_by(session, user=user),
            "errors": {"name": str(error)},
        }
        return templates.TemplateResponse(request, "pages/cohorts.html", context, status_code=422)
    return RedirectResponse(f"/cohorts/{cohort.id}", status_code=303)


@router.get("/cohorts/{cohort_id}", response_class=HTMLResponse)
def cohort_page(
    request: Request, cohort: CohortDep, session: SessionDep, user: CurrentUser, now: NowDep
) -> HTMLResponse:
    context = cohort_context(session, cohort, now=now)
    return templates.TemplateResponse(request, "pages/cohort.html", context)


def cohort_context(
    session: Session, cohort: Cohort, budget_error: str | None = None, *, now: datetime
) -> dict[str, Any]:
    results = cohort_results(session, cohort)
    learners = results["learners"]
    ids = [u.id for u in learners if u.id is not None]
    return results | {
        "cohort": cohort,
        # The compact summary in front of the grids (templates/partials/cohort_summary.html).
        "board": cohort_board(session, cohort=cohort, learners=learners, now=now),
        "due_words": lambda moment: in_words(moment, now=now),
        "links": work_links(session, learner_ids=ids),
        "drills": [describe(d) for d in all_drills()],
        "practice": cohort_practice(session, learners, now=now),
        "review_items": review_items.cohort_items(session, cohort_id=cohort.id or 0),
        "item_form": {},
        "errors": {"case_budget": budget_error} if budget_error else {},
    }


def cohort_results(session: Session, cohort: Cohort) -> dict[str, Any]:
    """Each learner's standing on every drill, case and exercise: the page's grids and the CSV's
    columns, gathered in one place so the two cannot drift apart."""
    learners = cohort_learners(session, cohort=cohort)
    ids = [u.id for u in learners if u.id is not None]
    return {
        "learners": learners,
        "grid": progress_grid(session, learner_ids=ids),
        "case_results": cohort_case_results(session, learners),
        "exercise_results": cohort_exercises(session, ids),
    }


@router.post("/cohorts/{cohort_id}/case-budget", response_model=None)
def set_case_budget(
    request: Request,
    cohort: CohortDep,
    fields: FormDep,
    session: SessionDep,
    user: CurrentUser,
    now: NowDep,
) -> Response:
    """How many experiments the cohort's learners may run per case (new case attempts)."""
    try:
        cohorts.set_case_budget(session, cohort=cohort, raw=fields.get("case_budget", ""))
    except cohorts.InvalidCohort as error:
        context = cohort_context(session, cohort, budget_error=str(error), now=now)
        return templates.TemplateResponse(request, "pages/cohort.html", context, status_code=422)
    return RedirectResponse(f"/cohorts/{cohort.id}#cases", status_code=303)


@router.post("/cohorts/{cohort_id}/review-items", response_model=None)
def add_review_item(
    request: Request,
    cohort: CohortDep,
    fields: FormDep,
    session: SessionDep,
    user: CurrentUser,
    now: NowDep,
) -> Response:
    """A review question of the instructor's own, due to the cohort's learners as a new item."""
    prompt, answer = fields.get("prompt", ""), fields.get("answer", "")
    try:
        review_items.add_cohort_item(
            session, cohort=cohort, author_id=user.saved_id, prompt=prompt, answer=answer
        )
    except review_items.InvalidCohortItem as error:
        context = cohort_context(session, cohort, now=now)
        context |= {"errors": error.errors, "item_form": {"prompt": prompt, "answer": answer}}
        return templates.TemplateResponse(request, "pages/cohort.html", context, status_code=422)
    return RedirectResponse(f"/cohorts/{cohort.id}#review-items", status_code=303)


@router.get("/cohorts/{cohort_id}/progress.csv")
def cohort_progress_csv(cohort: CohortDep, session: SessionDep, user: CurrentUser) -> Response:
    return Response(
        cohort_csv(**cohort_results(session, cohort)),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="cohort-{cohort.id}-progress.csv"'},
    )


@router.post("/cohorts/join", response_model=None)
def join_cohort(fields: FormDep, session: SessionDep, user: CurrentUser) -> Response:
    cohort = cohorts.join_cohort(session, learner=user, code=fields.get("code", ""))
    outcome = "unknown" if cohort is None else "ok"
    return RedirectResponse(f"/progress?join={outcome}", status_code=303)
