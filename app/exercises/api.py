"""The exercises' JSON API: the list, one exercise, a run of the learner's code (queued,
streamed live, judged, its file downloaded), the hint ladder and the earned solution."""

from typing import Annotated, Any

from fastapi import APIRouter, Body, Depends, Header, HTTPException, Query
from fastapi.responses import Response
from pydantic import BaseModel, Field
from sse_starlette import EventSourceResponse

from app.accounts.models import MAX_ROW_ID
from app.exercises import service, views
from app.exercises.deps import ExerciseDep, RunDep
from app.exercises.judgements import run_of
from app.runs.schemas import error_responses
from app.runs.streams import StreamSource, event_stream
from app.web.deps import BrokerDep, CurrentUser, EngineDep, RunnerDep, SessionDep
from drills.exercises.record import CODE_FILE
from drills.exercises.registry import all_exercises
from drills.exercises.starter_diff import diff_from_starter

api_router = APIRouter(prefix="/api/exercises", tags=["exercises"])


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
    """The story, the starter file, the hints revealed so far and (once shown) the solution,
    and when each rung of that help was taken."""
    context = views.exercise_context(session, exercise=exercise, learner_id=user.saved_id)
    return views.summary(exercise) | {
        "story": exercise.story,
        "starter": exercise.starter,
        "hints_shown": context["hints_shown"],
        "hints_left": context["hints_left"],
        "solution_earned": context["solution_earned"],
        "solution": context["solution"],
        # Each rung of the help ladder taken, with its time ("hint-1", ..., "solution").
        "help_steps": [
            {"step": step.step, "taken_at": step.taken_at}
            for step in service.help_steps(
                session, learner_id=user.saved_id, exercise_slug=exercise.slug
            )
        ],
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
    session.close()  # a stream holds no connection while it waits (app.runs.streams)
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
        "diff": diff_from_starter(exercise, exercise.solution, to="solution.py"),
    }
