"""Running a drill from its page, and the attempt's page and partials."""

from typing import Annotated, Any

from fastapi import APIRouter, HTTPException, Query, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response

from app.runs import comparison_table, evidence, explanations, replays, run_comparison, run_picks
from app.runs.attempt_requests import AttemptRequest, InvalidAttempt
from app.runs.attempts import (
    AlreadyEnded,
    cancel_attempt,
    runs_ahead,
    start_attempt,
)
from app.runs.fair_share import TooManyRuns
from app.runs.models import Attempt, AttemptStatus
from app.runs.views import attempt_context, drill_page_context
from app.web.access import can_review_work_of
from app.web.deps import (
    AttemptDep,
    CurrentUser,
    DrillDep,
    OwnAttemptDep,
    RunnerDep,
    SessionDep,
)
from app.web.forms import FormDep, is_htmx
from app.web.templating import templates
from drills.core.catalogue import describe

router = APIRouter(tags=["attempts"], include_in_schema=False)

KNOB_PREFIX = "knob."
NUMERIC_PREFIX = "numeric."


@router.post("/drills/{slug}/attempts", response_model=None)
def run_from_page(
    request: Request,
    drill: DrillDep,
    fields: FormDep,
    session: SessionDep,
    runner: RunnerDep,
    user: CurrentUser,
) -> Response:
    knobs = {k[len(KNOB_PREFIX) :]: v for k, v in fields.items() if k.startswith(KNOB_PREFIX)}
    # "Hide the bug from me": the setup is drawn, and the form's knobs and seed are not used.
    hidden = fields.get("hidden_setup") == "on"
    numeric = {
        k[len(NUMERIC_PREFIX) :]: v for k, v in fields.items() if k.startswith(NUMERIC_PREFIX)
    }
    attempt_request = AttemptRequest(
        hypothesis=fields.get("hypothesis", ""),
        prediction=fields.get("prediction", ""),
        knobs={} if hidden else knobs,
        seed="0" if hidden else fields.get("seed", "0"),
        numeric=numeric,
        key=fields.get("request_key"),
    )
    try:
        attempt = start_attempt(
            session,
            runner,
            drill=drill,
            learner_id=user.saved_id,
            request=attempt_request,
            draw_key=request.app.state.hidden_setup_key if hidden else None,
        )
    except (InvalidAttempt, TooManyRuns) as error:
        # Too many runs at once: the form comes back as sent, the reason beside the Run button.
        errors, status = (
            (error.errors, 422) if isinstance(error, InvalidAttempt) else ({"run": str(error)}, 429)
        )
        session.rollback()
        context: dict[str, Any] = {
            "drill": describe(drill),
            "form": {**fields, "knobs": knobs, "numeric": numeric},
            "errors": errors,
        }
        if is_htmx(request):
            return templates.TemplateResponse(
                request,
                "partials/attempt_form.html",
                context,
                status_code=status,
                headers={"HX-Retarget": "#attempt-form", "HX-Reswap": "outerHTML"},
            )
        page = drill_page_context(session, drill=drill, user=user)
        return templates.TemplateResponse(
            request, "pages/drill.html", page | context, status_code=status
        )
    if not is_htmx(request):
        return RedirectResponse(f"/attempts/{attempt.id}", status_code=303)
    # The run's panel, and a fresh one-time token for the form's next run (the same answer when
    # a second press sent the token of a run already started).
    return templates.TemplateResponse(
        request,
        "partials/attempt_started.html",
        attempt_context(session, attempt, user),
        headers={"HX-Trigger": "attempts-changed"},
    )


# `?run=15&run=12`: runs ticked in the drill page's list of attempts.
PickedRuns = Annotated[list[str] | None, Query()]


@router.get("/drills/{slug}/history", response_class=HTMLResponse)
def history_partial(
    request: Request,
    drill: DrillDep,
    session: SessionDep,
    user: CurrentUser,
    run: PickedRuns = None,
) -> HTMLResponse:
    # The list sends its ticks along when it refreshes (hx-include): they stay ticked.
    history = evidence.attempts_for(session, learner_id=user.saved_id, drill_slug=drill.slug)
    context = {"drill": describe(drill)} | run_picks.history_context(history, picked=run or [])
    return templates.TemplateResponse(request, "partials/attempt_history.html", context)


@router.get("/drills/{slug}/compare", response_model=None)
def compare_picked(
    request: Request,
    drill: DrillDep,
    session: SessionDep,
    user: CurrentUser,
    run: PickedRuns = None,
) -> Response:
    """The list's "Compare selected": to the first ticked run's page, the others beside it."""
    try:
        url = run_picks.comparison_url(
            session, learner_id=user.saved_id, drill_slug=drill.slug, values=run or []
        )
    except run_comparison.InvalidComparison as error:
        raise HTTPException(status_code=422, detail=str(error)) from error
    except run_comparison.NotComparable as error:
        raise HTTPException(status_code=404, detail=str(error)) from error
    except run_picks.UnfitPick as error:
        # The drill page again, the ticks kept and the reason beside the button.
        page = drill_page_context(session, drill=drill, user=user)
        page |= run_picks.history_context(page["history"], picked=run or [], error=str(error))
        page |= {"form": {"knobs": {}, "numeric": {}, "seed": 0}, "errors": {}}
        # Nothing ticked (the bare address, a press with no box ticked) is the drill page with
        # the prompt, not a refusal of anything sent.
        status = 422 if run else 200
        return templates.TemplateResponse(request, "pages/drill.html", page, status_code=status)
    return RedirectResponse(url, status_code=303)


# `?compare=12,15` (or repeated): other attempts of the drill drawn on the same axes.
CompareQuery = Annotated[list[str] | None, Query()]


def with_comparison(
    session: SessionDep, attempt: Attempt, user: CurrentUser, compare: list[str] | None
) -> dict[str, Any]:
    context = attempt_context(session, attempt, user)
    try:
        context |= run_comparison.attempt_page_context(session, attempt, compare or [])
    except run_comparison.InvalidComparison as error:
        raise HTTPException(status_code=422, detail=str(error)) from error
    except run_comparison.NotComparable as error:
        raise HTTPException(status_code=404, detail=str(error)) from error
    return context | {"compare_table": comparison_table.for_attempt_page(context)}


@router.get("/attempts/{attempt_id}", response_class=HTMLResponse)
def attempt_page(
    request: Request,
    attempt: AttemptDep,
    session: SessionDep,
    user: CurrentUser,
    compare: CompareQuery = None,
) -> HTMLResponse:
    context = with_comparison(session, attempt, user, compare)
    return templates.TemplateResponse(request, "pages/attempt.html", context)


@router.get("/attempts/{attempt_id}/panel", response_class=HTMLResponse)
def attempt_panel(
    request: Request,
    attempt: AttemptDep,
    session: SessionDep,
    user: CurrentUser,
    compare: CompareQuery = None,
) -> HTMLResponse:
    headers = {"HX-Trigger": "attempts-changed"} if attempt.final else {}
    context = with_comparison(session, attempt, user, compare)
    return templates.TemplateResponse(
        request, "partials/attempt_panel.html", context, headers=headers
    )


@router.get("/attempts/{attempt_id}/wait", response_class=HTMLResponse)
def run_wait(request: Request, attempt: AttemptDep, session: SessionDep) -> HTMLResponse:
    """The in-flight panel's line saying whether the run waits (and behind how many) or runs."""
    context = {"attempt": attempt, "runs_ahead": 0}
    if attempt.status == AttemptStatus.queued:
        context["runs_ahead"] = runs_ahead(session, attempt)
    return templates.TemplateResponse(request, "partials/run_wait.html", context)


@router.post("/attempts/{attempt_id}/cancel", response_model=None)
def cancel_from_page(
    request: Request, attempt: OwnAttemptDep, session: SessionDep, user: CurrentUser
) -> Response:
    assert attempt.id is not None
    try:
        attempt = cancel_attempt(session, attempt_id=attempt.id)
    except AlreadyEnded as error:
        if not is_htmx(request):
            return Response(str(error), status_code=409)
        # It ended meanwhile: the panel shows how.
    if not is_htmx(request):
        return RedirectResponse(f"/attempts/{attempt.id}", status_code=303)
    return templates.TemplateResponse(
        request,
        "partials/attempt_panel.html",
        attempt_context(session, attempt, user),
        headers={"HX-Trigger": "attempts-changed"},  # the history shows the new status
    )


@router.post("/attempts/{attempt_id}/replays", response_model=None)
def replay_attempt(
    request: Request,
    attempt: AttemptDep,
    session: SessionDep,
    runner: RunnerDep,
    user: CurrentUser,
) -> Response:
    if not can_review_work_of(session, user, attempt.learner_id):
        return Response("Only the learner's instructor can replay this run.", status_code=403)
    if not attempt.final:
        return Response("Wait until the run has finished, then replay it.", status_code=422)
    replays.start_replay(session, runner, attempt=attempt, requested_by=user.saved_id)
    if not is_htmx(request):
        return RedirectResponse(f"/attempts/{attempt.id}#replays", status_code=303)
    context = attempt_context(session, attempt, user)
    return templates.TemplateResponse(request, "partials/replays.html", context)


@router.get("/attempts/{attempt_id}/replays", response_class=HTMLResponse)
def replays_partial(
    request: Request, attempt: AttemptDep, session: SessionDep, user: CurrentUser
) -> HTMLResponse:
    context = attempt_context(session, attempt, user)
    return templates.TemplateResponse(request, "partials/replays.html", context)


@router.post("/attempts/{attempt_id}/explanation", response_class=HTMLResponse)
def explain_back(
    request: Request,
    attempt: OwnAttemptDep,
    fields: FormDep,
    session: SessionDep,
    user: CurrentUser,
) -> HTMLResponse:
    context = attempt_context(session, attempt, user)
    try:
        context["explanation"] = explanations.explain_back(
            session,
            attempt=attempt,
            learner_id=user.saved_id,
            fields=fields,
        )
    except explanations.InvalidExplanation as invalid:
        context.update(explanation_errors=invalid.errors, explanation_draft=invalid.draft)
        return templates.TemplateResponse(
            request, "partials/explanation.html", context, status_code=422
        )
    return templates.TemplateResponse(request, "partials/explanation.html", context)
