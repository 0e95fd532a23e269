"""Cases: the list, one attempt's page and its forms (its live events and JSON:
app/cases/evidence_routes.py)."""

from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session
from starlette.datastructures import FormData

from app.cases import service as cases
from app.cases import views as case_views
from app.cases.models import CaseAttempt
from app.diagnosis import shown
from app.diagnosis.form import InvalidCaseInput
from app.runs.fair_share import TooManyRuns
from app.web import pages
from app.web.deps import (
    CaseAttemptDep,
    CurrentUser,
    OptionalUserDep,
    OwnCaseAttemptDep,
    RunnerDep,
    SessionDep,
)
from app.web.forms import FormDataDep, is_htmx
from app.web.templating import templates
from drills.cases.registry import UnknownCase, get_case

router = APIRouter(tags=["cases"], include_in_schema=False)


@router.get("/cases", response_class=HTMLResponse)
def case_list(request: Request, session: SessionDep, user: OptionalUserDep) -> HTMLResponse:
    rows = case_views.case_list(session, user.id if user else None)
    return templates.TemplateResponse(request, "pages/cases.html", {"rows": rows})


@router.post("/cases/{case_key}/attempts", response_model=None)
def open_case(
    request: Request, case_key: str, session: SessionDep, runner: RunnerDep, user: CurrentUser
) -> Response:
    try:
        case = get_case(case_key)
    except UnknownCase:
        raise HTTPException(status_code=404, detail=f"No case called {case_key!r}.") from None
    key = request.app.state.case_draw_key
    try:
        case_attempt = cases.open_case(
            session, runner, learner_id=user.saved_id, case=case, key=key
        )
    except cases.CaseNotOffered as error:
        raise HTTPException(status_code=410, detail=str(error)) from None
    return RedirectResponse(f"/cases/attempts/{case_attempt.id}", status_code=303)


def page_response(
    request: Request,
    session: Session,
    case_attempt: CaseAttempt,
    *,
    template: str = "pages/case.html",
    errors: dict[str, str] | None = None,
    refusal: str | None = None,
    form: dict[str, Any] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    assert case_attempt.id is not None
    context = case_views.case_page_context(session, case_attempt)
    # An instructor reads a learner's case; only its learner sees the forms.
    viewer = getattr(request.state, "user", None)
    owner = viewer is not None and viewer.id == case_attempt.learner_id
    context |= {"errors": errors or {}, "refusal": refusal, "form": form or {}, "owner": owner}
    # The review and revise-and-resubmit on it are grading's (app/web/pages.py).
    context |= pages.parts_context("case", session, case_attempt, viewer, context)
    return templates.TemplateResponse(request, template, context, status_code=status_code)


@router.get("/cases/attempts/{case_attempt_id}", response_class=HTMLResponse)
def case_page(request: Request, case_attempt: CaseAttemptDep, session: SessionDep) -> HTMLResponse:
    return page_response(request, session, case_attempt)


@router.get("/cases/attempts/{case_attempt_id}/body", response_class=HTMLResponse)
def case_body(request: Request, case_attempt: CaseAttemptDep, session: SessionDep) -> HTMLResponse:
    """The part of the page below the story: re-fetched when a run ends."""
    return page_response(request, session, case_attempt, template="partials/case_body.html")


def _answer(
    request: Request,
    session: Session,
    case_attempt: CaseAttempt,
    error: Exception,
    form: dict[str, Any],
) -> HTMLResponse:
    if isinstance(error, InvalidCaseInput):
        errors, refusal, status = error.errors, None, 422
    else:
        errors, refusal = {}, str(error)
        status = 429 if isinstance(error, TooManyRuns) else 409
        if is_htmx(request):
            # htmx swaps no 409 or 429 (base.html): the case as it stands, the reason on top.
            status = 200
    template = "partials/case_body.html" if is_htmx(request) else "pages/case.html"
    session.rollback()
    assert case_attempt.id is not None
    return page_response(
        request,
        session,
        _reread(session, case_attempt.id),
        template=template,
        errors=errors,
        refusal=refusal,
        form=form,
        status_code=status,
    )


def _echo(form: FormData) -> dict[str, Any]:
    """The form as sent, to fill it in again beside its errors (a checkbox group keeps every
    value it sent)."""
    echo: dict[str, Any] = {key: value for key, value in form.items() if isinstance(value, str)}
    echo["alternatives"] = [str(value) for value in form.getlist("alternatives")]
    return echo


def _reread(session: Session, case_attempt_id: int) -> CaseAttempt:
    """The case attempt as stored now (a service just changed it, or rolled back)."""
    fresh = session.get(CaseAttempt, case_attempt_id, populate_existing=True)
    assert fresh is not None
    return fresh


def _done(request: Request, session: Session, case_attempt_id: int) -> Response:
    if is_htmx(request):
        fresh = _reread(session, case_attempt_id)
        return page_response(request, session, fresh, template="partials/case_body.html")
    return RedirectResponse(f"/cases/attempts/{case_attempt_id}", status_code=303)


@router.post("/cases/attempts/{case_attempt_id}/diagnosis", response_model=None)
def record_diagnosis(
    request: Request, case_attempt: OwnCaseAttemptDep, session: SessionDep, form: FormDataDep
) -> Response:
    case_set = cases.case_of(case_attempt).case_set
    fields: dict[str, Any] = {
        "leading": shown.cause_key(case_set, str(form.get("leading") or "")) or "",
        "alternatives": [
            shown.cause_key(case_set, str(value)) or "?" for value in form.getlist("alternatives")
        ],
        "first_test": form.get("first_test"),
        "intervention": form.get("intervention"),
        "confirmation": form.get("confirmation"),
    }
    try:
        cases.record_diagnosis(session, case_attempt, fields)
    except (InvalidCaseInput, cases.CaseRefused) as error:
        return _answer(request, session, case_attempt, error, _echo(form))
    assert case_attempt.id is not None
    return _done(request, session, case_attempt.id)


@router.post("/cases/attempts/{case_attempt_id}/experiments", response_model=None)
def run_experiment(
    request: Request,
    case_attempt: OwnCaseAttemptDep,
    session: SessionDep,
    runner: RunnerDep,
    form: FormDataDep,
) -> Response:
    try:
        cases.run_experiment(session, runner, case_attempt, str(form.get("experiment") or ""))
    except (InvalidCaseInput, cases.CaseRefused, TooManyRuns) as error:
        return _answer(request, session, case_attempt, error, {})
    assert case_attempt.id is not None
    return _done(request, session, case_attempt.id)


@router.post("/cases/attempts/{case_attempt_id}/verdict", response_model=None)
def submit_verdict(
    request: Request,
    case_attempt: OwnCaseAttemptDep,
    session: SessionDep,
    runner: RunnerDep,
    form: FormDataDep,
) -> Response:
    case_set = cases.case_of(case_attempt).case_set
    fields = {
        "cause": shown.cause_key(case_set, str(form.get("cause") or "")) or "",
        "fix": form.get("fix"),
    }
    try:
        cases.submit_verdict(session, runner, case_attempt, fields)
    except (InvalidCaseInput, cases.CaseRefused, TooManyRuns) as error:
        return _answer(request, session, case_attempt, error, _echo(form))
    assert case_attempt.id is not None
    return _done(request, session, case_attempt.id)
