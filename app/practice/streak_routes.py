"""The learner's choice to show or hide their streak, set on their progress page."""

from fastapi import APIRouter, Request
from fastapi.responses import RedirectResponse, Response

from app.practice import settings
from app.web.deps import CurrentUser, SessionDep
from app.web.error_pages import error_page
from app.web.forms import FormDep

router = APIRouter(tags=["practice"], include_in_schema=False)


@router.post("/practice/streak", response_model=None)
def set_streak_shown(
    request: Request, fields: FormDep, session: SessionDep, user: CurrentUser
) -> Response:
    try:
        settings.set_show_streak(session, learner_id=user.saved_id, choice=fields.get("show", ""))
    except settings.InvalidSetting as error:
        return error_page(request, 422, error.message)
    return RedirectResponse("/progress#streak-setting", status_code=303)
