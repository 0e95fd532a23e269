"""Who may read or change what. Every id-bearing route goes through these checks.

Learners see their own work; an instructor sees the work of learners in the cohorts they run; an
admin sees everything. Anything else is answered exactly like a record that does not exist.

Every check reads the viewer's current role (the user is loaded afresh on every request): an
instructor an admin makes a learner loses their cohorts at once, though the cohorts still name them.
"""

from sqlmodel import Session, col, select

from app.accounts.models import Cohort, CohortMembership, Role, User


def cohorts_joined_by(session: Session, *, learner_id: int) -> list[Cohort]:
    """The cohorts a learner belongs to: whose instructors may read their work, and whose case
    budget they work under."""
    return list(
        session.exec(
            select(Cohort)
            .join(CohortMembership, col(CohortMembership.cohort_id) == col(Cohort.id))
            .where(CohortMembership.learner_id == learner_id)
        ).all()
    )


def learners_of(session: Session, instructor: User) -> set[int]:
    if instructor.role != Role.instructor:
        return set()  # a demoted instructor's cohorts are no longer theirs to read
    rows = session.exec(
        select(CohortMembership.learner_id)
        .join(Cohort, col(Cohort.id) == col(CohortMembership.cohort_id))
        .where(Cohort.instructor_id == instructor.id)
    ).all()
    return set(rows)


def can_read_work_of(session: Session, viewer: User, learner_id: int) -> bool:
    if viewer.id == learner_id or viewer.role == Role.admin:
        return True
    return viewer.role == Role.instructor and learner_id in learners_of(session, viewer)


def can_review_work_of(session: Session, viewer: User, learner_id: int) -> bool:
    if viewer.id == learner_id:
        return False  # nobody reviews their own evidence
    if viewer.role == Role.admin:
        return True
    return viewer.role == Role.instructor and learner_id in learners_of(session, viewer)


def can_manage_cohort(viewer: User, cohort: Cohort) -> bool:
    if viewer.role == Role.admin:
        return True
    return viewer.role == Role.instructor and cohort.instructor_id == viewer.id
