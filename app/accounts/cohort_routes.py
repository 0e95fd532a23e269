"""Instructors run cohorts; learners join them with a code. (A cohort's page, which reads every
feature's results, is a report: app/cohort_report.)"""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts import cohorts
from app.web.deps import CurrentUser, InstructorDep, SessionDep
from app.web.forms import FormDep
from app.web.templating import templates

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


@router.post("/cohorts/join", response_model=None)
def join_cohort(fields: FormDep, session: SessionDep, user: CurrentUser) -> Response:
    cohort = cohorts.join_cohort(session, learner=user, code=fields.get("code", ""))
    outcome = "unknown" if cohort is None else "ok"
    return RedirectResponse(f"/progress?join={outcome}", status_code=303)
