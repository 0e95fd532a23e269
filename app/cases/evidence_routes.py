"""A case's evidence read as it comes: a run's live events under the case's names, and the case
attempt as JSON (before the verdict, only what its page shows)."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse

from app.accounts.models import MAX_ROW_ID
from app.cases import service as cases
from app.cases import views as case_views
from app.cases.models import CaseAttempt, CaseRun, CaseStage
from app.diagnosis import shown
from app.runs.schemas import error_responses
from app.runs.streams import StreamSource, event_stream
from app.web.access import can_read_work_of
from app.web.deps import BrokerDep, CaseAttemptDep, CurrentUser, EngineDep, RowId, SessionDep

router = APIRouter(tags=["cases"], include_in_schema=False)
# The case attempt's JSON is part of the API, and documented with it at /openapi.json.
api_router = APIRouter(tags=["cases"])


def case_run_stream(case_run_id: RowId, session: SessionDep, user: CurrentUser) -> StreamSource:
    """The case run's attempt, if the user may read it (app.runs.streams.StreamSource says why the
    session closes)."""
    run = session.get(CaseRun, case_run_id)
    case_attempt = session.get(CaseAttempt, run.case_attempt_id) if run else None
    if (
        run is None
        or case_attempt is None
        or not can_read_work_of(session, user, case_attempt.learner_id)
    ):
        raise HTTPException(status_code=404, detail=f"No case run {case_run_id}.")
    rename = shown.rename_for(cases.case_of(case_attempt).case_set)
    session.close()
    return StreamSource(run.attempt_id, rename)


@router.get("/cases/runs/{case_run_id}/events")
async def case_run_events(
    source: Annotated[StreamSource, Depends(case_run_stream)],
    engine: EngineDep,
    broker: BrokerDep,
    after: Annotated[int, Query(ge=0, le=MAX_ROW_ID)] = 0,
    last_event_id: Annotated[int | None, Header(ge=0, le=MAX_ROW_ID)] = None,
) -> EventSourceResponse:
    """A case run's live events, as /api/attempts/{id}/events sends them, but only the series
    the case shows, under the case's names."""
    return event_stream(source, engine, broker, after=after, last_event_id=last_event_id)


@api_router.get("/api/cases/attempts/{case_attempt_id}", responses=error_responses(401, 404, 422))
def case_attempt_json(case_attempt: CaseAttemptDep, session: SessionDep) -> JSONResponse:
    """A case attempt as JSON: before the reveal, what its page shows and nothing more."""
    context = case_views.case_page_context(session, case_attempt)
    revealed = case_attempt.stage == CaseStage.revealed
    body: dict[str, Any] = {
        "id": case_attempt.id,
        "case": case_attempt.case_key,
        "title": context["case"].title,
        "stage": case_attempt.stage,
        "budget": case_attempt.budget,
        "experiments_spent": context["spent"],
        "runs": [
            {
                "id": run["id"],
                "kind": run["kind"],
                "experiment": run["experiment"].key if run["experiment"] else None,
                "status": run["status"],
                "evidence": (run.get("shown") or {}) | {"series": run["series"]},
            }
            for run in context["runs"]
        ],
    }
    if case_attempt.diagnosis:
        body["diagnosis"] = {
            "leading": context["diagnosis_text"]["leading"],
            "alternatives": context["diagnosis_text"]["alternatives"],
            "first_test": case_attempt.diagnosis.get("first_test"),
            "intervention": case_attempt.diagnosis.get("intervention"),
            "confirmation": case_attempt.diagnosis.get("confirmation"),
        }
    if revealed:
        body["truth"] = {
            "cause": case_attempt.cause,
            "knobs": case_attempt.knobs,
            "seed": case_attempt.seed,
            "commands": [run.get("command") for run in context["runs"]],
        }
        body["score"] = case_attempt.score
    return JSONResponse(body)
