"""The cohort page, the two forms that live on it (the case budget, the cohort's own review
items) and its progress CSV. The forms re-render the whole page on a mistake, so they sit
with it."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.accounts import cohorts
from app.cohort_report.results import cohort_context, cohort_results
from app.grading.cohort_csv import cohort_csv
from app.practice import items as review_items
from app.web.deps import CohortDep, CurrentUser, NowDep, SessionDep
from app.web.forms import FormDep
from app.web.templating import templates

router = APIRouter(tags=["cohorts"], include_in_schema=False)


@router.get("/cohorts/{cohort_id}", response_class=HTMLResponse)
def cohort_page(
    request: Request, cohort: CohortDep, session: SessionDep, user: CurrentUser, now: NowDep
) -> HTMLResponse:
    context = cohort_context(session, cohort, now=now)
    return templates.TemplateResponse(request, "pages/cohort.html", context)


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
