"""Exercise pages and their JSON API: the list, one exercise (story, editor, hints), a run of
the learner's code (queued, streamed live, judged), the hint ladder and the earned solution."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse

from app.access import can_read_work_of
from app.deps import BrokerDep, CurrentUser, EngineDep, RowId, RunnerDep, SessionDep
from app.exercises import service, views
from app.exercises.judgements import run_of
from app.forms import FormDataDep
from app.models import MAX_ROW_ID, Attempt
from app.schemas import error_responses
from app.streams import StreamSource, event_stream
from app.templating import templates
from drills.exercises.contract import Exercise
from drills.exercises.record import CODE_FILE
from drills.exercises.registry import UnknownExercise, all_exercises, get_exercise

api_router = APIRouter(prefix="/api/exercises", tags=["exercises"])
router = APIRouter(tags=["exercises"], include_in_schema=False)


def exercise_from_path(slug: str) -> Exercise:
    try:
        return get_exercise(slug)
    except UnknownExercise:
        raise HTTPException(status_code=404, detail=f"No exercise {slug[:64]!r}.") from None


ExerciseDep = Annotated[Exercise, Depends(exercise_from_path)]


def readable_run(run_id: RowId, session: SessionDep, user: CurrentUser) -> Attempt:
    """An exercise run its viewer may read (theirs, or a learner's they review); anything else
    is answered exactly like a missing one."""
    attempt = session.get(Attempt, run_id)
    if (
        attempt is None
        or attempt.exercise_slug is None
        or not can_read_work_of(session, user, attempt.learner_id)
    ):
        raise HTTPException(status_code=404, detail=f"No exercise run {run_id}.")
    return attempt


RunDep = Annotated[Attempt, Depends(readable_run)]


class RunCreate(BaseModel):
    code: str = Field(description="The whole file, as the learner edited it.")


class RunCreated(BaseModel):
    id: int
    status: str
    command: str
    urls: dict[str, str]


class HintAsk(BaseModel):
    rung: int | None = Field(
        default=None, ge=1, le=20, description="Reveal hints up to this one (default: the next)."
    )


CODE_DOWNLOAD = {
    "description": "The file as submitted (saved as the name its replay command reads).",
    "content": {"text/x-python": {"schema": {"type": "string"}}},
}


def _refused(error: service.InvalidCode) -> HTTPException:
    detail = [{"loc": ["body", "code"], "msg": str(error), "type": "value_error"}]
    return HTTPException(status_code=422, detail=detail)


# -- the API ---------------------------------------------------------------------------------
@api_router.get("", responses=error_responses(422))
def list_exercises() -> list[dict[str, Any]]:
    return [views.summary(exercise) for exercise in all_exercises()]


@api_router.get("/{slug}", responses=error_responses(401, 404, 422))
def exercise_detail(
    exercise: ExerciseDep, session: SessionDep, user: CurrentUser
) -> dict[str, Any]:
    """The story, the starter file, the hints revealed so far and (once shown) the solution."""
    context = views.exercise_context(session, exercise=exercise, learner_id=user.saved_id)
    return views.summary(exercise) | {
        "story": exercise.story,
        "starter": exercise.starter,
        "hints_shown": context["hints_shown"],
        "hints_left": context["hints_left"],
        "solution_earned": context["solution_earned"],
        "solution": context["solution"],
        "sandbox_unavailable": context["sandbox_unavailable"],
        "runs": [
            {k: v for k, v in row.items() if k != "created_at"}
            | {"self": f"/api/exercises/runs/{row['id']}"}
            for row in context["runs"]
        ],
    }


@api_router.post(
    "/{slug}/runs", status_code=202, responses=error_responses(400, 401, 403, 404, 413, 422)
)
def create_run(
    exercise: ExerciseDep,
    body: RunCreate,
    session: SessionDep,
    runner: RunnerDep,
    user: CurrentUser,
) -> RunCreated:
    """Run your code: it is queued, streamed live like any run, then judged in a sandbox on
    hidden seeds by how it trains."""
    try:
        attempt = service.start_run(
            session, runner, exercise=exercise, learner_id=user.saved_id, code=body.code
        )
    except service.InvalidCode as error:
        raise _refused(error) from None
    assert attempt.id is not None
    return RunCreated(
        id=attempt.id, status=attempt.status, command=attempt.command, urls=views.run_links(attempt)
    )


@api_router.get("/runs/{run_id}", responses=error_responses(401, 404, 422))
def get_run(attempt: RunDep, session: SessionDep) -> dict[str, Any]:
    return views.run_public(session, attempt=attempt)


@api_router.get(
    "/runs/{run_id}/code",
    response_class=Response,
    responses=error_responses(401, 404, 422) | {200: CODE_DOWNLOAD},
)
def download_code(attempt: RunDep, session: SessionDep) -> Response:
    """The run's file exactly as submitted, named as its replay command reads it."""
    run = run_of(session, attempt)
    if run is None:
        raise HTTPException(status_code=404, detail=f"No exercise run {attempt.id}.")
    # A fixed name, made by the server: nothing of the learner's reaches the header.
    return Response(
        run.code.encode(),
        media_type="text/x-python",
        headers={"Content-Disposition": f'attachment; filename="{CODE_FILE}"'},
    )


def run_stream(attempt: RunDep, session: SessionDep) -> StreamSource:
    assert attempt.id is not None
    session.close()  # a stream holds no connection while it waits (app.streams)
    return StreamSource(attempt.id)


@api_router.get("/runs/{run_id}/events", responses=error_responses(401, 404, 422))
async def stream_run(
    source: Annotated[StreamSource, Depends(run_stream)],
    engine: EngineDep,
    broker: BrokerDep,
    after: Annotated[int, Query(ge=0, le=MAX_ROW_ID)] = 0,
    last_event_id: Annotated[int | None, Header(ge=0, le=MAX_ROW_ID)] = None,
) -> EventSourceResponse:
    """The run's server-sent events, as /api/attempts/{id}/events sends them."""
    return event_stream(source, engine, broker, after=after, last_event_id=last_event_id)


@api_router.post("/{slug}/hints", responses=error_responses(401, 403, 404, 422))
def take_hint(
    exercise: ExerciseDep,
    session: SessionDep,
    user: CurrentUser,
    body: Annotated[HintAsk | None, Body()] = None,
) -> dict[str, Any]:
    """Reveal the next hint (or hints up to `rung`): each one taken lowers a later pass's score."""
    help_taken = service.reveal_hint(
        session, learner_id=user.saved_id, exercise=exercise, rung=body.rung if body else None
    )
    return {
        "hints_shown": list(exercise.hints[: help_taken.hints_taken]),
        "hints_left": len(exercise.hints) - help_taken.hints_taken,
    }


@api_router.post("/{slug}/solution", responses=error_responses(401, 403, 404, 409, 422))
def show_solution(exercise: ExerciseDep, session: SessionDep, user: CurrentUser) -> dict[str, Any]:
    """The reference solution and its diff from the starter, once earned (every hint taken, or
    a passing run); showing it is recorded."""
    try:
        service.reveal_solution(session, learner_id=user.saved_id, exercise=exercise)
    except service.NotEarned as error:
        raise HTTPException(status_code=409, detail=str(error)) from None
    return {
        "solution": exercise.solution,
        "diff": service.diff_from_starter(exercise, exercise.solution, to="solution.py"),
    }


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
