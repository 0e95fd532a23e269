"""The page where a learner answers a case in code, and the form it posts (the service is
app/exercises/case_verdict.py). The case page links here, one link per exercise any of the
case's causes names, so that which links it shows never depends on the drawn cause."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.cases.models import CaseAttempt, CaseStage
from app.exercises import case_verdict
from app.exercises.deps import ExerciseDep
from app.runs.fair_share import TooManyRuns
from app.web.deps import CaseAttemptDep, OwnCaseAttemptDep, RunnerDep, SessionDep
from app.web.forms import FormDataDep
from app.web.templating import templates
from drills.cases.contract import Case
from drills.cases.registry import UnknownCase, get_case
from drills.exercises.contract import Exercise
from drills.sandbox import available as sandbox_available

router = APIRouter(tags=["exercises"], include_in_schema=False)

PATH = "/cases/attempts/{case_attempt_id}/code/{slug}"


def _case_offering(case_attempt: CaseAttempt, exercise: Exercise) -> Case:
    try:
        case = get_case(case_attempt.case_key)
    except UnknownCase:
        raise HTTPException(status_code=410, detail="This case has left the catalogue.") from None
    if exercise.slug not in case.exercises():
        raise HTTPException(
            status_code=404, detail=f"This case offers no exercise {exercise.slug!r}."
        )
    return case


def _page(
    request: Request,
    case_attempt: CaseAttempt,
    case: Case,
    exercise: Exercise,
    *,
    code: str | None = None,
    cause: str = "",
    error: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    viewer = getattr(request.state, "user", None)
    owner = viewer is not None and viewer.id == case_attempt.learner_id
    context = {
        "case": case,
        "case_attempt": case_attempt,
        "exercise": exercise,
        # Every cause of the set, by position, as the case page's own verdict form offers them.
        "causes": [
            {"value": f"cause-{index}", "text": item.text}
            for index, item in enumerate(case.case_set.causes, start=1)
        ],
        "chosen": cause,
        "code": exercise.starter if code is None else code,
        "error": error,
        "open": case_attempt.stage == CaseStage.investigating and owner,
        "sandbox_unavailable": sandbox_available(),
    }
    return templates.TemplateResponse(
        request, "pages/case_code.html", context, status_code=status_code
    )


@router.get(PATH, response_class=HTMLResponse)
def code_verdict_page(
    request: Request, case_attempt: CaseAttemptDep, exercise: ExerciseDep
) -> HTMLResponse:
    """The learner's form; anyone else who may read the case (their instructor) sees the page
    without it."""
    return _page(request, case_attempt, _case_offering(case_attempt, exercise), exercise)


@router.post(PATH, response_model=None)
def submit_code_verdict(
    request: Request,
    case_attempt: OwnCaseAttemptDep,
    exercise: ExerciseDep,
    session: SessionDep,
    runner: RunnerDep,
    form: FormDataDep,
) -> Response:
    case = _case_offering(case_attempt, exercise)
    code, cause = form.get("code"), form.get("cause")
    typed, chosen = (code if isinstance(code, str) else None), str(cause or "")
    try:
        case_verdict.submit_code_verdict(
            session,
            runner,
            case_attempt=case_attempt,
            case=case,
            exercise=exercise,
            cause_value=cause,
            code=code,
        )
    except case_verdict.InvalidCodeVerdict as error:
        return _page(
            request,
            case_attempt,
            case,
            exercise,
            code=typed,
            cause=chosen,
            error=str(error),
            status_code=422,
        )
    except (case_verdict.CodeVerdictRefused, TooManyRuns) as error:
        status = 429 if isinstance(error, TooManyRuns) else 409
        session.rollback()
        fresh = session.get(CaseAttempt, case_attempt.id, populate_existing=True)
        assert fresh is not None
        return _page(
            request,
            fresh,
            case,
            exercise,
            code=typed,
            cause=chosen,
            error=str(error),
            status_code=status,
        )
    return RedirectResponse(f"/cases/attempts/{case_attempt.id}#reveal", status_code=303)
