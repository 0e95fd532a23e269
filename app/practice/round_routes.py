"""Curve-diagnosis rounds: the list and a new round, one round's page (its curves streaming in,
the diagnosis form, then the truth), its live events, the answer and an instructor's review."""

from typing import Annotated, Any

from fastapi import APIRouter, Depends, Header, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session
from sse_starlette import EventSourceResponse
from starlette.datastructures import FormData

from app.accounts.models import MAX_ROW_ID
from app.diagnosis import shown
from app.diagnosis.form import InvalidCaseInput
from app.practice import round_views, rounds
from app.practice.round_models import DiagnosisRound
from app.runs.streams import StreamSource, event_stream
from app.web import pages
from app.web.deps import (
    BrokerDep,
    CurrentUser,
    EngineDep,
    NowDep,
    OwnRoundDep,
    RoundDep,
    RunnerDep,
    SessionDep,
)
from app.web.forms import FormDataDep, is_htmx
from app.web.templating import templates

router = APIRouter(tags=["practice"], include_in_schema=False)


@router.get("/practice/rounds", response_class=HTMLResponse)
def round_list(request: Request, session: SessionDep, user: CurrentUser) -> HTMLResponse:
    context = {
        "rows": round_views.round_rows(session, learner_id=user.saved_id),
        "open_round": rounds.unanswered_round(session, learner_id=user.saved_id),
    }
    return templates.TemplateResponse(request, "pages/rounds.html", context)


@router.post("/practice/rounds", response_model=None)
def new_round(
    request: Request, session: SessionDep, runner: RunnerDep, user: CurrentUser, now: NowDep
) -> RedirectResponse:
    """A new round, or the learner's unanswered one: one round is open at a time."""
    diagnosis_round = rounds.start_round(
        session, runner, learner_id=user.saved_id, now=now, key=request.app.state.draw_key
    )
    return RedirectResponse(f"/practice/rounds/{diagnosis_round.id}", status_code=303)


def page_response(
    request: Request,
    session: Session,
    diagnosis_round: DiagnosisRound,
    *,
    template: str = "pages/round.html",
    errors: dict[str, str] | None = None,
    refusal: str | None = None,
    form: dict[str, Any] | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    viewer = getattr(request.state, "user", None)
    context = round_views.round_page_context(session, diagnosis_round)
    context |= round_views.viewer_context(viewer, diagnosis_round)
    context |= {"errors": errors or {}, "refusal": refusal, "form": form or {}}
    # The review and revise-and-resubmit on it are grading's (app/web/pages.py).
    context |= pages.parts_context("round", session, diagnosis_round, viewer, context)
    return templates.TemplateResponse(request, template, context, status_code=status_code)


@router.get("/practice/rounds/{round_id}", response_class=HTMLResponse)
def round_page(request: Request, diagnosis_round: RoundDep, session: SessionDep) -> HTMLResponse:
    return page_response(request, session, diagnosis_round)


@router.get("/practice/rounds/{round_id}/body", response_class=HTMLResponse)
def round_body(request: Request, diagnosis_round: RoundDep, session: SessionDep) -> HTMLResponse:
    """The page below its heading: re-fetched when the run ends."""
    return page_response(request, session, diagnosis_round, template="partials/round_body.html")


def round_stream(diagnosis_round: RoundDep, session: SessionDep) -> StreamSource:
    """The round's run (app.runs.streams.StreamSource says why the session closes)."""
    run = rounds.run_of(session, diagnosis_round)
    if run is None or run.id is None:
        raise HTTPException(status_code=404, detail=f"No run for round {diagnosis_round.id}.")
    rename = shown.rename_for(rounds.case_set_for(diagnosis_round))
    session.close()
    return StreamSource(run.id, rename)


@router.get("/practice/rounds/{round_id}/events")
async def round_events(
    source: Annotated[StreamSource, Depends(round_stream)],
    engine: EngineDep,
    broker: BrokerDep,
    after: Annotated[int, Query(ge=0, le=MAX_ROW_ID)] = 0,
    last_event_id: Annotated[int | None, Header(ge=0, le=MAX_ROW_ID)] = None,
) -> EventSourceResponse:
    """The round's run as /api/attempts/{id}/events streams it, but only the series the round
    shows, under neutral names."""
    return event_stream(source, engine, broker, after=after, last_event_id=last_event_id)


@router.post("/practice/rounds/{round_id}/answer", response_model=None)
def answer_round(
    request: Request,
    diagnosis_round: OwnRoundDep,
    session: SessionDep,
    now: NowDep,
    form: FormDataDep,
) -> Response:
    case_set = rounds.case_set_for(diagnosis_round)
    echo = _echo(form)
    fields: dict[str, object] = {
        "leading": shown.cause_key(case_set, echo.get("leading", "")) or "",
        "alternatives": [shown.cause_key(case_set, value) or "?" for value in echo["alternatives"]],
        "first_test": echo.get("first_test", ""),
        "intervention": echo.get("intervention", ""),
        "confirmation": echo.get("confirmation", ""),
    }
    assert diagnosis_round.id is not None
    try:
        rounds.answer_round(session, diagnosis_round, fields, now)
    except (InvalidCaseInput, rounds.RoundRefused) as error:
        session.rollback()
        refused = isinstance(error, rounds.RoundRefused)
        status = 409 if refused else 422
        if refused and is_htmx(request):
            # htmx swaps no 409 (base.html): the round as it stands now, with the reason on top.
            status = 200
        return page_response(
            request,
            session,
            _reread(session, diagnosis_round.id),
            template="partials/round_body.html" if is_htmx(request) else "pages/round.html",
            errors={} if refused else error.errors,  # type: ignore[union-attr]
            refusal=str(error) if refused else None,
            form=echo,
            status_code=status,
        )
    if is_htmx(request):
        fresh = _reread(session, diagnosis_round.id)
        return page_response(request, session, fresh, template="partials/round_body.html")
    return RedirectResponse(f"/practice/rounds/{diagnosis_round.id}", status_code=303)


def _echo(form: FormData) -> dict[str, Any]:
    """The form's text fields as sent (a file sent in their place counts as nothing), to read
    and to fill in again beside their errors."""
    echo: dict[str, Any] = {key: value for key, value in form.items() if isinstance(value, str)}
    echo["alternatives"] = [
        value for value in form.getlist("alternatives") if isinstance(value, str)
    ]
    return echo


def _reread(session: Session, round_id: int) -> DiagnosisRound:
    fresh = session.get(DiagnosisRound, round_id, populate_existing=True)
    assert fresh is not None
    return fresh
