"""Setting, changing and removing a cohort's assignments, and listing them. Keyword-only
functions over a Session.

Two presses of "Set" (or two tabs) with the same title store one assignment: the second one
finds the first and, if it asks for the same thing, answers with it; anything else under that
title is a conflict. An edit carries the version it was made from, and is refused once another
edit has been saved in between.
"""

from sqlalchemy import delete, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.accounts.models import Cohort, CohortMembership, User
from app.assignments.forms import AssignmentForm
from app.assignments.models import Assignment
from app.models.time import as_utc, utcnow


class AssignmentConflict(ValueError):
    """The change cannot be made as asked (409): the message says why."""


class AssignmentGone(LookupError):
    """The assignment was removed in the meantime (404)."""


def _same(assignment: Assignment, form: AssignmentForm) -> bool:
    wanted = [item.as_dict() for item in form.items]
    return as_utc(assignment.due_at) == form.due_at and assignment.items == wanted


def _titled(session: Session, *, cohort_id: int, title: str) -> Assignment | None:
    return session.exec(
        select(Assignment).where(Assignment.cohort_id == cohort_id, Assignment.title == title)
    ).first()


def _taken(title: str) -> AssignmentConflict:
    return AssignmentConflict(
        f"This cohort already has an assignment called {title!r}: choose another title."
    )


def set_assignment(
    session: Session, *, cohort: Cohort, author: User, form: AssignmentForm
) -> Assignment:
    cohort_id = cohort.id or 0
    existing = _titled(session, cohort_id=cohort_id, title=form.title)
    if existing is not None:
        if _same(existing, form):
            return existing  # the same form sent twice
        raise _taken(form.title)
    assignment = Assignment(
        cohort_id=cohort_id,
        author_id=author.saved_id,
        title=form.title,
        due_at=form.due_at,
        items=[item.as_dict() for item in form.items],
    )
    session.add(assignment)
    try:
        session.commit()
    except IntegrityError:  # uq_assignment_title: a simultaneous press got there first
        session.rollback()
        existing = _titled(session, cohort_id=cohort_id, title=form.title)
        if existing is not None and _same(existing, form):
            return existing
        raise _taken(form.title) from None
    session.refresh(assignment)
    return assignment


def change_assignment(
    session: Session, *, assignment: Assignment, form: AssignmentForm, version: int
) -> None:
    """Save an edit made from the form of `version`; one saved in between refuses it."""
    try:
        changed = session.execute(
            update(Assignment)
            .where(col(Assignment.id) == assignment.id, col(Assignment.version) == version)
            .values(
                title=form.title,
                due_at=form.due_at,
                items=[item.as_dict() for item in form.items],
                version=version + 1,
                updated_at=utcnow(),
            )
        )
        session.commit()
    except IntegrityError:
        session.rollback()
        raise _taken(form.title) from None
    if changed.rowcount == 1:  # type: ignore[attr-defined]
        return
    if session.get(Assignment, assignment.id, populate_existing=True) is None:
        raise AssignmentGone(f"No assignment {assignment.id}.")
    raise AssignmentConflict(
        "Someone saved a change to this assignment after you opened the form: "
        "reload the page to see it, then make your change again."
    )


def remove_assignment(session: Session, *, assignment: Assignment, version: int) -> None:
    """Remove the assignment as it was at `version`: once an edit has been saved since, the
    person removing it has not seen what they would remove, and is refused."""
    removed = session.execute(
        delete(Assignment).where(
            col(Assignment.id) == assignment.id, col(Assignment.version) == version
        )
    )
    session.commit()
    if removed.rowcount != 1:  # type: ignore[attr-defined]
        raise AssignmentConflict(
            "Someone saved a change to this assignment after you opened the page: "
            "reload it to see the change before you remove the assignment."
        )


def cohort_of(session: Session, *, assignment: Assignment) -> Cohort:
    cohort = session.get(Cohort, assignment.cohort_id)
    assert cohort is not None  # the foreign key holds it
    return cohort


def cohort_assignments(session: Session, *, cohort_id: int) -> list[Assignment]:
    return list(
        session.exec(
            select(Assignment)
            .where(Assignment.cohort_id == cohort_id)
            .order_by(col(Assignment.due_at), col(Assignment.id))
        ).all()
    )


def learner_assignments(session: Session, *, learner_id: int) -> list[tuple[Cohort, Assignment]]:
    """The assignments of every cohort the learner belongs to, soonest due first."""
    rows = session.exec(
        select(Cohort, Assignment)
        .join(Assignment, col(Assignment.cohort_id) == col(Cohort.id))
        .join(CohortMembership, col(CohortMembership.cohort_id) == col(Cohort.id))
        .where(CohortMembership.learner_id == learner_id)
        .order_by(col(Assignment.due_at), col(Assignment.id))
    ).all()
    return [(cohort, assignment) for cohort, assignment in rows]
