"""A learner's progress page: every drill's status, their latest feedback, their cohorts, the
study path and (unless hidden) the streak. A report, as the catalogue is: it reads grading's
progress and practice's path and settings."""

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

from app.grading.progress import is_first_visit, latest_feedback, progress_grid
from app.practice.settings import shows_streak
from app.practice.study_path import path_standing
from app.web.access import cohorts_joined_by
from app.web.deps import CurrentUser, SessionDep
from app.web.templating import templates
from drills.core.catalogue import describe
from drills.core.registry import all_drills

router = APIRouter(tags=["pages"], include_in_schema=False)


@router.get("/progress", response_class=HTMLResponse)
def progress_page(request: Request, session: SessionDep, user: CurrentUser) -> HTMLResponse:
    assert user.id is not None
    cohorts = cohorts_joined_by(session, learner_id=user.id)
    drills = [describe(drill) for drill in all_drills()]
    statuses = progress_grid(session, learner_ids=[user.id])[user.id]
    context = {
        "drills": drills,
        "statuses": statuses,
        # No drill started yet (a new account): a welcome that points to the first drill.
        "first_drill": drills[0] if is_first_visit(statuses) and drills else None,
        "feedback": latest_feedback(session, learner_id=user.id),
        "cohorts": cohorts,
        "join_error": None,
        "path": path_standing(session, learner_id=user.id),
        "show_streak": shows_streak(session, learner_id=user.id),
    }
    return templates.TemplateResponse(request, "pages/progress.html", context)
