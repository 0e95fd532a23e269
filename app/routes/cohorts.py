"""Instructors run cohorts; learners join them with a code."""

import secrets

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from app.deps import CohortDep, CurrentUser, InstructorDep, SessionDep
from app.forms import FormDep
from app.models import Cohort, CohortMembership, Role
from app.progress import cohort_csv, cohort_learners, progress_grid
from app.templating import templates
from drills.core.catalogue import describe
from drills.core.registry import all_drills

router = APIRouter(tags=["cohorts"], include_in_schema=False)

# No 0/O or 1/I/L: codes are read out loud and typed by hand.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


def new_join_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))


@router.get("/cohorts", response_class=HTMLResponse)
def cohorts_page(request: Request, session: SessionDep, user: InstructorDep) -> HTMLResponse:
    query = select(Cohort).order_by(col(Cohort.id))
    if user.role != Role.admin:
        query = query.where(Cohort.instructor_id == user.id)
    context = {"cohorts": session.exec(query).all(), "error": None}
    return templates.TemplateResponse(request, "pages/cohorts.html", context)


@router.post("/cohorts", response_model=None)
def create_cohort(
    request: Request, fields: FormDep, session: SessionDep, user: InstructorDep
) -> Response:
    name = fields.get("name", "").strip()
    if not name or len(name) > 120:
        cohorts = session.exec(select(Cohort).where(Cohort.instructor_id == user.id)).all()
        context = {"cohorts": cohorts, "error": "give the cohort a name (at most 120 characters)"}
        return templates.TemplateResponse(request, "pages/cohorts.html", context, status_code=422)
    assert user.id is not None
    cohort = Cohort(name=name, join_code=new_join_code(), instructor_id=user.id)
    session.add(cohort)
    session.commit()
    return RedirectResponse(f"/cohorts/{cohort.id}", status_code=303)


@router.get("/cohorts/{cohort_id}", response_class=HTMLResponse)
def cohort_page(
    request: Request, cohort: CohortDep, session: SessionDep, user: CurrentUser
) -> HTMLResponse:
    learners = cohort_learners(session, cohort=cohort)
    context = {
        "cohort": cohort,
        "learners": learners,
        "grid": progress_grid(session, learner_ids=[u.id for u in learners if u.id is not None]),
        "drills": [describe(d) for d in all_drills()],
    }
    return templates.TemplateResponse(request, "pages/cohort.html", context)


@router.get("/cohorts/{cohort_id}/progress.csv")
def cohort_progress_csv(cohort: CohortDep, session: SessionDep, user: CurrentUser) -> Response:
    return Response(
        cohort_csv(session, cohort=cohort),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="cohort-{cohort.id}-progress.csv"'},
    )


@router.post("/cohorts/join", response_model=None)
def join_cohort(fields: FormDep, session: SessionDep, user: CurrentUser) -> Response:
    code = fields.get("code", "").strip().upper()
    cohort = session.exec(select(Cohort).where(Cohort.join_code == code)).first()
    if cohort is None:
        return RedirectResponse("/progress?join=unknown", status_code=303)
    assert cohort.id is not None and user.id is not None
    exists = session.exec(
        select(CohortMembership).where(
            CohortMembership.cohort_id == cohort.id, CohortMembership.learner_id == user.id
        )
    ).first()
    if exists is None:
        session.add(CohortMembership(cohort_id=cohort.id, learner_id=user.id))
        try:
            session.commit()
        except IntegrityError:  # uq_cohort_learner: a simultaneous join got there first
            session.rollback()
    return RedirectResponse("/progress?join=ok", status_code=303)
