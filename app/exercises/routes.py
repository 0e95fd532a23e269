"""Exercise pages: the list, one exercise (story, editor, hints), a run of the learner's code
(queued, streamed live, judged), the hint ladder and the earned solution. The JSON API is
app/exercises/api.py."""

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse

from app.exercises import comments, service, views
from app.exercises.deps import ExerciseDep, RunDep
from app.runs.models import Attempt
from app.web.access import can_review_work_of
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
    request: Request,
    exercise: ExerciseDep,
    session: SessionDep,
    user: CurrentUser,
    fresh: bool = False,
) -> HTMLResponse:
    """`fresh`: the editor opens on the starter, not the learner's last code (a review item
    sends them here to write it again from memory)."""
    return _exercise_page(
        request, session, exercise, user, code=exercise.starter if fresh else None
    )


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


def _run_page(
    request: Request,
    session: SessionDep,
    exercise: Exercise,
    attempt: Attempt,
    user: CurrentUser,
    *,
    error: str | None = None,
    typed: str = "",
    status_code: int = 200,
) -> HTMLResponse:
    _run_for_exercise(exercise, attempt)
    context = views.run_context(session, exercise=exercise, attempt=attempt)
    context |= comments.teaching_context(session, attempt=attempt, viewer=user)
    context |= {"comment_error": error, "comment_typed": typed}
    return templates.TemplateResponse(
        request, "pages/exercise_run.html", context, status_code=status_code
    )


@router.get("/exercises/{slug}/runs/{run_id}", response_class=HTMLResponse)
def run_page(
    request: Request, exercise: ExerciseDep, attempt: RunDep, session: SessionDep, user: CurrentUser
) -> HTMLResponse:
    return _run_page(request, session, exercise, attempt, user)


@router.post("/exercises/{slug}/runs/{run_id}/comments", response_model=None)
def comment_on_run(
    request: Request,
    exercise: ExerciseDep,
    attempt: RunDep,
    form: FormDataDep,
    session: SessionDep,
    user: CurrentUser,
) -> RedirectResponse | HTMLResponse:
    """A reviewer's comment on a learner's run; the learner reads it on the run's page."""
    _run_for_exercise(exercise, attempt)
    if not can_review_work_of(session, user, attempt.learner_id):
        # The learner themselves (a reader, not a reviewer): nothing of theirs to comment on.
        raise HTTPException(status_code=403, detail="Only the learner's instructor comments.")
    body = form.get("body")
    try:
        comments.add_comment(session, attempt=attempt, author=user, body=body)
    except comments.InvalidComment as error:
        typed = body if isinstance(body, str) else ""
        return _run_page(
            request,
            session,
            exercise,
            attempt,
            user,
            error=str(error),
            typed=typed,
            status_code=422,
        )
    return RedirectResponse(f"{views.run_links(attempt)['page']}#comments", status_code=303)


@router.get("/exercises/{slug}/runs/{run_id}/panel", response_class=HTMLResponse)
def run_panel(
    request: Request, exercise: ExerciseDep, attempt: RunDep, session: SessionDep
) -> HTMLResponse:
    _run_for_exercise(exercise, attempt)
    context = views.run_context(session, exercise=exercise, attempt=attempt)
    return templates.TemplateResponse(request, "partials/exercise_run_panel.html", context)
