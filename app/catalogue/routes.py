"""The catalogue and the drill page."""

from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.grading.progress import catalogue_standing
from app.practice.outlook import outlook_words, review_outlook
from app.practice.streak import shown_streak
from app.practice.study_path import path_standing
from app.runs.views import drill_page_context
from app.web.deps import DrillDep, NowDep, OptionalUserDep, SessionDep
from app.web.templating import templates
from drills.core.catalogue import describe
from drills.core.registry import all_drills

router = APIRouter(tags=["pages"], include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def catalogue(
    request: Request, user: OptionalUserDep, session: SessionDep, now: NowDep
) -> HTMLResponse:
    drills = [describe(drill) for drill in all_drills()]
    context: dict[str, Any] = {
        "drills": drills,
        "standing": {},
        "path": None,
        "outlook": None,
        "streak": None,
    }
    if user is not None:
        learner_id = user.saved_id
        context |= {
            "standing": catalogue_standing(session, learner_id=learner_id),
            "path": path_standing(session, learner_id=learner_id),
            "outlook": outlook_words(review_outlook(session, learner_id=learner_id, now=now)),
            "streak": shown_streak(session, learner_id=learner_id, now=now),
        }
    return templates.TemplateResponse(request, "pages/catalogue.html", context)


@router.get("/drills/{slug}", response_class=HTMLResponse)
def drill_page(
    request: Request, drill: DrillDep, session: SessionDep, user: OptionalUserDep
) -> HTMLResponse:
    # A visitor reads the drill (its scenario, hypotheses and knobs) before registering.
    context = (
        drill_page_context(session, drill=drill, user=user)
        if user is not None
        else {"drill": describe(drill)}
    )
    # A link may set up the form (a review item sends a learner back with a new seed):
    # ?seed=N&knob.name=value. Only prefilled; running it validates as always.
    query = request.query_params
    knobs = {name[5:]: value for name, value in query.items() if name.startswith("knob.")}
    form = {"knobs": knobs, "numeric": {}, "seed": query.get("seed", 0)}
    context |= {"form": form, "errors": {}}
    return templates.TemplateResponse(request, "pages/drill.html", context)
