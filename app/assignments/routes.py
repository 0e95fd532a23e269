"""Assignment pages: an instructor sets, edits and removes a cohort's assignments and follows the
cohort through them; the gradebook CSV; a learner's own assignments."""

from datetime import datetime
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlmodel import Session

from app.accounts.models import Cohort
from app.assignments import service, when
from app.assignments.deps import AssignmentDep
from app.assignments.forms import InvalidAssignment, parse_assignment
from app.assignments.gradebook import gradebook_csv
from app.assignments.items import ItemKind, choices, from_stored
from app.assignments.models import Assignment
from app.assignments.views import cohort_board, item_titles, my_assignments
from app.grading.progress import cohort_learners
from app.web.deps import CohortDep, CurrentUser, NowDep, SessionDep
from app.web.forms import FormDep
from app.web.templating import templates

router = APIRouter(tags=["assignments"], include_in_schema=False)


def _words(now: datetime) -> dict[str, Any]:
    return {
        "due_words": lambda moment: when.in_words(moment, now=now),
        "as_date": when.as_date,
    }


def _version(fields: dict[str, str]) -> int:
    """The version of the assignment the form was made from (an edit or a removal carries it)."""
    version = fields.get("version", "")
    if not version.isascii() or not version.isdigit() or len(version) > 9:
        raise InvalidAssignment("version", "the form is missing its version: reload the page")
    return int(version)


def _form_of(assignment: Assignment) -> dict[str, Any]:
    """An assignment as its edit form shows it."""
    items = from_stored(assignment.items)
    rounds = next((int(i.key) for i in items if i.kind == ItemKind.rounds), 0)
    return {
        "title": assignment.title,
        "due": when.as_field(assignment.due_at),
        "rounds": str(rounds) if rounds else "",
        "checked": {item.field for item in items},
        "version": assignment.version,
    }


def _echo(fields: dict[str, str]) -> dict[str, Any]:
    """What was posted, to fill the form again beside its errors."""
    return {
        "title": fields.get("title", ""),
        "due": fields.get("due", ""),
        "rounds": fields.get("rounds", ""),
        "checked": {name for name, value in fields.items() if value == "on"},
        "version": fields.get("version", ""),
    }


def _cohort_page(
    request: Request,
    session: Session,
    cohort: Cohort,
    *,
    now: datetime,
    form: dict[str, Any] | None = None,
    errors: dict[str, str] | None = None,
    refusal: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    learners = cohort_learners(session, cohort=cohort)
    board = cohort_board(session, cohort=cohort, learners=learners, now=now)
    context = {
        "cohort": cohort,
        "learners": learners,
        "board": board,
        "titles": item_titles(board.assignments),
        "choices": choices(),
        "form": form or {"checked": set()},
        "errors": errors or {},
        "refusal": refusal,
        "from_stored": from_stored,
        "now": now,
    } | _words(now)
    return templates.TemplateResponse(
        request, "pages/cohort_assignments.html", context, status_code=status_code
    )


@router.get("/cohorts/{cohort_id}/assignments", response_class=HTMLResponse)
def cohort_assignments_page(
    request: Request, cohort: CohortDep, session: SessionDep, now: NowDep
) -> HTMLResponse:
    return _cohort_page(request, session, cohort, now=now)


@router.post("/cohorts/{cohort_id}/assignments", response_model=None)
def set_assignment(
    request: Request,
    cohort: CohortDep,
    fields: FormDep,
    session: SessionDep,
    user: CurrentUser,
    now: NowDep,
) -> Response:
    try:
        form = parse_assignment(fields)
        assignment = service.set_assignment(session, cohort=cohort, author=user, form=form)
    except InvalidAssignment as error:
        return _cohort_page(
            request, session, cohort, now=now, form=_echo(fields), errors=error.errors,
            status_code=422,
        )  # fmt: skip
    except service.AssignmentConflict as error:
        return _cohort_page(
            request, session, cohort, now=now, form=_echo(fields), refusal=str(error),
            status_code=409,
        )  # fmt: skip
    return RedirectResponse(
        f"/cohorts/{cohort.id}/assignments#assignment-{assignment.id}", status_code=303
    )


def _edit_page(
    request: Request,
    assignment: Assignment,
    *,
    form: dict[str, Any],
    errors: dict[str, str] | None = None,
    refusal: str | None = None,
    status_code: int = 200,
) -> HTMLResponse:
    context = {
        "assignment": assignment,
        "choices": choices(),
        "form": form,
        "errors": errors or {},
        "refusal": refusal,
    }
    return templates.TemplateResponse(
        request, "pages/assignment_edit.html", context, status_code=status_code
    )


@router.get("/assignments/{assignment_id}/edit", response_class=HTMLResponse)
def edit_assignment_page(request: Request, assignment: AssignmentDep) -> HTMLResponse:
    return _edit_page(request, assignment, form=_form_of(assignment))


@router.post("/assignments/{assignment_id}", response_model=None)
def change_assignment(
    request: Request, assignment: AssignmentDep, fields: FormDep, session: SessionDep
) -> Response:
    try:
        version = _version(fields)
        form = parse_assignment(fields)
        service.change_assignment(session, assignment=assignment, form=form, version=version)
    except InvalidAssignment as error:
        return _edit_page(
            request, assignment, form=_echo(fields), errors=error.errors, status_code=422
        )
    except service.AssignmentConflict as error:
        return _edit_page(
            request, assignment, form=_echo(fields), refusal=str(error), status_code=409
        )
    except service.AssignmentGone as gone:
        # Removed while the form was open: answered as if it had never been there.
        raise HTTPException(status_code=404, detail=str(gone)) from None
    return RedirectResponse(
        f"/cohorts/{assignment.cohort_id}/assignments#assignment-{assignment.id}", status_code=303
    )


@router.post("/assignments/{assignment_id}/delete", response_model=None)
def remove_assignment(
    request: Request, assignment: AssignmentDep, fields: FormDep, session: SessionDep, now: NowDep
) -> Response:
    cohort_id = assignment.cohort_id
    cohort = service.cohort_of(session, assignment=assignment)
    try:
        service.remove_assignment(session, assignment=assignment, version=_version(fields))
    except InvalidAssignment as error:
        return _cohort_page(
            request, session, cohort, now=now, refusal=error.message, status_code=422
        )
    except service.AssignmentConflict as error:
        return _cohort_page(request, session, cohort, now=now, refusal=str(error), status_code=409)
    return RedirectResponse(f"/cohorts/{cohort_id}/assignments", status_code=303)


@router.get("/cohorts/{cohort_id}/gradebook.csv")
def gradebook(cohort: CohortDep, session: SessionDep, now: NowDep) -> Response:
    learners = cohort_learners(session, cohort=cohort)
    board = cohort_board(session, cohort=cohort, learners=learners, now=now)
    return Response(
        gradebook_csv(session, learners=learners, board=board),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="cohort-{cohort.id}-gradebook.csv"'},
    )


@router.get("/assignments", response_class=HTMLResponse)
def my_assignments_page(
    request: Request, session: SessionDep, user: CurrentUser, now: NowDep
) -> HTMLResponse:
    mine = my_assignments(session, learner=user, now=now)
    context = {
        "mine": mine,
        "titles": item_titles([entry.standing.assignment for entry in mine]),
        "now": now,
    } | _words(now)
    return templates.TemplateResponse(request, "pages/assignments.html", context)
