"""The catalogue and the drill page."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.deps import CurrentUser, DrillDep, OptionalUserDep, SessionDep
from app.templating import templates
from app.views import drill_page_context
from drills.core.catalogue import describe
from drills.core.registry import all_drills

router = APIRouter(tags=["pages"], include_in_schema=False)


@router.get("/", response_class=HTMLResponse)
def catalogue(request: Request, user: OptionalUserDep) -> HTMLResponse:
    drills = [describe(drill) for drill in all_drills()]
    return templates.TemplateResponse(request, "pages/catalogue.html", {"drills": drills})


@router.get("/drills/{slug}", response_class=HTMLResponse)
def drill_page(
    request: Request, drill: DrillDep, session: SessionDep, user: CurrentUser
) -> HTMLResponse:
    context = drill_page_context(session, drill=drill, user=user)
    context |= {"form": {"knobs": {}, "numeric": {}, "seed": 0}, "errors": {}}
    return templates.TemplateResponse(request, "pages/drill.html", context)
