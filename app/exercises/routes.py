"""Exercise pages: the list, one exercise (story, editor, hints), a run of the learner's code
(queued, streamed live, judged), the hint ladder and the earned solution. The JSON API is
app/exercises/api.py."""

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from app.exercises import service, views
from app.exercises.deps import ExerciseDep, RunDep
from app.runs.models import Attempt
from app.web.deps import CurrentUser, RunnerDep, SessionDep
from app.web.forms import FormDataDep
from app.web.templating import templates
from drills.exercises.contract import Exercise
from drills.exercises.registry import all_exercises

router = APIRouter(tags=["exercises"], include_in_schema=False)


# -- the pages -------------------------------------------------------------------------------
@router.get("/exercises", response_class=HTMLResponse)
def exercise_list(request: Request) -> HTMLResponse:
    context = {"exercises": all_exercises()}
    return templates.TemplateResponse(request, "pages/exercises.html", context)


def _exercise_page(
    request: Request,
    session: SessionDep,
    exercise: Exercise,
    user: CurrentUser,
    *,
    code: str | None = None,
    error: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    context = views.exercise_context(session, exercise=exercise, learner_id=user.saved_id)
    if code is not None:
        context["code"] = code  # a refused run keeps what the learner typed
    context["error"] = error
    return templates.TemplateResponse(
        request, "pages/exercise.html", context, status_code=status_code
    )


@router.get("/exercises/{slug}", response_class=HTMLResponse)
def exercise_page(
    request: Request, exercise: ExerciseDep, session: SessionDep, user: CurrentUser
) -> HTMLResponse:
    return _exercise_page(request, session, exercise, user)


@router.post("/exercises/{slug}/runs", response_model=None)
def run_from_page(
    request: Request,
    exercise: ExerciseDep,
    form: FormDataDep,
    session: SessionDep,
    runner: RunnerDep,
    user: CurrentUser,
) -> RedirectResponse | HTMLResponse:
    code = form.get("code")
    try:
        attempt = service.start_run(
            session, runner, exercise=exercise, learner_id=user.saved_id, code=code
        )
    except service.InvalidCode as error:
        typed = code if isinstance(code, str) else None
        return _exercise_page(
            request, session, exercise, user, code=typed, error=str(error), status_code=422
        )
    return RedirectResponse(views.run_links(attempt)["page"], status_code=303)


@router.post("/exercises/{slug}/hints", response_model=None)
def hint_from_page(
    exercise: ExerciseDep, form: FormDataDep, session: SessionDep, user: CurrentUser
) -> RedirectResponse:
    raw = form.get("rung")
    rung = (
        int(raw)
        if isinstance(raw, str) and raw.isascii() and raw.isdigit() and len(raw) < 3
        else None
    )
    service.reveal_hint(session, learner_id=user.saved_id, exercise=exercise, rung=rung)
    return RedirectResponse(f"/exercises/{exercise.slug}#hints", status_code=303)


@router.post("/exercises/{slug}/solution", response_model=None)
def solution_from_page(
    request: Request, exercise: ExerciseDep, session: SessionDep, user: CurrentUser
) -> RedirectResponse | HTMLResponse:
    try:
        service.reveal_solution(session, learner_id=user.saved_id, exercise=exercise)
    except service.NotEarned as error:
        return _exercise_page(request, session, exercise, user, error=str(error), status_code=409)
    return RedirectResponse(f"/exercises/{exercise.slug}#solution", status_code=303)


def _run_for_exercise(exercise: Exercise, attempt: Attempt) -> Attempt:
    if attempt.exercise_slug != exercise.slug:
        raise HTTPException(status_code=404, detail=f"No run {attempt.id} of this exercise.")
    return attempt


@router.get("/exercises/{slug}/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request, exercise: ExerciseDep, attempt: RunDep, session: SessionDep
) -> HTMLResponse:
    _run_for_exercise(exercise, attempt)
    context = views.run_context(session, exercise=exercise, attempt=attempt)
    return templates.TemplateResponse(request, "pages/exercise_run.html", context)


@router.get("/exercises/{slug}/runs/{run_id}/panel", response_class=HTMLResponse)
def run_panel(
    request: Request, exercise: ExerciseDep, attempt: RunDep, session: SessionDep
) -> HTMLResponse:
    _run_for_exercise(exercise, attempt)
    context = views.run_context(session, exercise=exercise, attempt=attempt)
    return templates.TemplateResponse(request, "partials/exercise_run_panel.html", context)
