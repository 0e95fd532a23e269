"""The JSON API: drills, attempts and their live events."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from sse_starlette import EventSourceResponse

from app.accounts.models import MAX_ROW_ID
from app.core.limits import MAX_REQUEST_KEY
from app.runs import evidence
from app.runs.attempt_requests import AttemptRequest, InvalidAttempt
from app.runs.attempts import (
    AlreadyEnded,
    cancel_attempt,
    start_attempt,
)
from app.runs.schemas import (
    AttemptCreate,
    AttemptCreated,
    AttemptFields,
    AttemptPublic,
    SessionInfo,
    attempt_links,
    error_responses,
)
from app.runs.streams import StreamSource, event_stream
from app.security.csrf import csrf_token
from app.web.deps import (
    AttemptDep,
    BrokerDep,
    CurrentUser,
    EngineDep,
    OwnAttemptDep,
    RunnerDep,
    SessionDep,
    drill_from_path,
)
from drills.core.catalogue import describe
from drills.core.registry import all_drills

router = APIRouter(prefix="/api", tags=["api"])


@router.get("/session", responses=error_responses(401, 422))
def session_info(request: Request, user: CurrentUser) -> SessionInfo:
    """Who is logged in, and the CSRF token to send as X-CSRF-Token on POST requests."""
    assert user.id is not None
    return SessionInfo(
        user_id=user.id, username=user.username, role=user.role, csrf_token=csrf_token(request)
    )


@router.get("/drills", responses=error_responses(422))
def list_drills() -> list[dict[str, Any]]:
    return [describe(drill) for drill in all_drills()]


@router.get("/drills/{slug}", responses=error_responses(404, 422))
def get_drill(slug: str) -> dict[str, Any]:
    return describe(drill_from_path(slug))


@router.post("/attempts", status_code=202, responses=error_responses(400, 401, 403, 404, 413, 422))
def create_attempt(
    http_request: Request,
    body: AttemptCreate,
    session: SessionDep,
    runner: RunnerDep,
    user: CurrentUser,
    idempotency_key: Annotated[str | None, Header(max_length=MAX_REQUEST_KEY)] = None,
) -> AttemptCreated:
    """Start a run. With an `Idempotency-Key` header (1 to 64 letters, digits or . _ : -), the
    same key sent again answers with the run it started (202 again) and starts nothing. With
    `hidden_setup`, the server draws the setup and withholds it until the run has ended."""
    drill = drill_from_path(body.drill)
    chosen = {"knobs", "seed"} & body.model_fields_set
    if body.hidden_setup and chosen:
        detail = [
            {
                "loc": ["body", name],
                "msg": "a hidden setup is drawn by the server: send no knobs and no seed",
                "type": "value_error",
            }
            for name in sorted(chosen)
        ]
        raise HTTPException(status_code=422, detail=detail)
    request = AttemptRequest(
        hypothesis=body.hypothesis,
        prediction=body.prediction,
        knobs=body.knobs,
        seed=body.seed,
        numeric=body.numeric,
        key=idempotency_key,
    )
    try:
        attempt = start_attempt(
            session,
            runner,
            drill=drill,
            learner_id=user.saved_id,
            request=request,
            draw_key=http_request.app.state.hidden_setup_key if body.hidden_setup else None,
        )
    except InvalidAttempt as error:
        detail = [
            {"loc": _location(field), "msg": message, "type": "value_error"}
            for field, message in error.errors.items()
        ]
        raise HTTPException(status_code=422, detail=detail) from None
    assert attempt.id is not None
    return AttemptCreated(
        id=attempt.id,
        status=attempt.status,
        command=None if attempt.setup_concealed else attempt.command,
        urls=attempt_links(attempt.id),
    )


def _location(field: str) -> list[str]:
    """Where a bad field of an attempt request was: the key is a header, the rest the body."""
    return ["header", "idempotency-key"] if field == "request_key" else ["body", *field.split(".")]


@router.get("/attempts/{attempt_id}", responses=error_responses(401, 404, 422))
def get_attempt(attempt: AttemptDep, session: SessionDep) -> AttemptPublic:
    assert attempt.id is not None
    fields = AttemptFields.model_validate(attempt).model_dump()
    if attempt.setup_concealed:
        fields |= {"knobs": None, "seed": None, "command": None}
    return AttemptPublic(
        **fields,
        metrics=evidence.metric_series(session, attempt_id=attempt.id),
        urls=attempt_links(attempt.id),
    )


@router.post(
    "/attempts/{attempt_id}/cancel",
    status_code=202,
    responses=error_responses(401, 403, 404, 409, 422),
)
def cancel(attempt: OwnAttemptDep, session: SessionDep) -> AttemptPublic:
    """Cancel one of your attempts: a queued one ends `cancelled` at once; a running one stops
    at its next reported step (within about a second) and ends `cancelled` with its points."""
    assert attempt.id is not None
    try:
        attempt = cancel_attempt(session, attempt_id=attempt.id)
    except AlreadyEnded as error:
        raise HTTPException(status_code=409, detail=str(error)) from None
    return get_attempt(attempt, session)


def attempt_stream(attempt: AttemptDep, session: SessionDep) -> StreamSource:
    """The attempt the stream follows (app.runs.streams.StreamSource: why the session closes)."""
    assert attempt.id is not None
    session.close()
    return StreamSource(attempt.id)


@router.get("/attempts/{attempt_id}/events", responses=error_responses(401, 404, 422))
async def stream_attempt(
    source: Annotated[StreamSource, Depends(attempt_stream)],
    engine: EngineDep,
    broker: BrokerDep,
    after: Annotated[int, Query(ge=0, le=MAX_ROW_ID)] = 0,
    last_event_id: Annotated[int | None, Header(ge=0, le=MAX_ROW_ID)] = None,
) -> EventSourceResponse:
    """Server-sent events: `status`, `points` ({"points": [[metric, step, value], ...]}; each
    with an id, the stream's cursor), `done`. Points after `after`, or after the `Last-Event-ID`
    a reconnecting browser sends, so none is sent twice."""
    return event_stream(source, engine, broker, after=after, last_event_id=last_event_id)
