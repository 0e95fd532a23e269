"""The catalogue and the drill page."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app import evidence
from app.deps import DrillDep, LearnerIdDep, SessionDep
from app.templating import templates
from drills.catalogue import describe
from drills.registry import all_drills

router = APIRouter(tags=["pages"], include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def catalogue(request: Request) -> HTMLResponse:
    drills = [describe(drill) for drill in all_drills()]
    return templates.TemplateResponse(request, "pages/catalogue.html", {"drills": drills})


@router.get("/drills/{slug}", response_class=HTMLResponse)
def drill_page(
    request: Request, drill: DrillDep, session: SessionDep, learner_id: LearnerIdDep
) -> HTMLResponse:
    history = evidence.attempts_for(session, learner_id=learner_id, drill_slug=drill.slug)
    return templates.TemplateResponse(
        request,
        "pages/drill.html",
        {
            "drill": describe(drill),
            "history": history,
            "form": {"knobs": {}, "seed": 0},
            "errors": {},
        },
    )
