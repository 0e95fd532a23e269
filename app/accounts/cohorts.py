"""Cohorts: instructors create them, learners join them with a code. Keyword-only functions over a
Session."""

import secrets

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, select

from app.accounts.models import Cohort, CohortMembership, Role, User
from app.core.limits import MAX_CASE_BUDGET, MAX_COHORT_NAME, MIN_CASE_BUDGET
from app.core.whole_numbers import whole_number

# No 0/O or 1/I/L: codes are read out loud and typed by hand.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


class InvalidCohort(ValueError):
    pass


def new_join_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(8))


def cohorts_run_by(session: Session, *, user: User) -> list[Cohort]:
    """Every cohort for an admin; an instructor's own cohorts otherwise."""
    query = select(Cohort).order_by(col(Cohort.id))
    if user.role != Role.admin:
        query = query.where(Cohort.instructor_id == user.id)
    return list(session.exec(query).all())


def create_cohort(session: Session, *, instructor: User, name: str) -> Cohort:
    name = name.strip()
    if not name or len(name) > MAX_COHORT_NAME:
        raise InvalidCohort(f"give the cohort a name (at most {MAX_COHORT_NAME} characters)")
    assert instructor.id is not None
    cohort = Cohort(name=name, join_code=new_join_code(), instructor_id=instructor.id)
    session.add(cohort)
    session.commit()
    session.refresh(cohort)
    return cohort


def join_cohort(session: Session, *, learner: User, code: str) -> Cohort | None:
    """Make the learner a member of the cohort with this join code (None: no such code).
    Joining twice, or twice at once, leaves one membership."""
    cohort = session.exec(select(Cohort).where(Cohort.join_code == code.strip().upper())).first()
    if cohort is None:
        return None
    assert cohort.id is not None and learner.id is not None
    exists = session.exec(
        select(CohortMembership).where(
            CohortMembership.cohort_id == cohort.id, CohortMembership.learner_id == learner.id
        )
    ).first()
    if exists is None:
        session.add(CohortMembership(cohort_id=cohort.id, learner_id=learner.id))
        try:
            session.commit()
        except IntegrityError:  # uq_cohort_learner: a simultaneous join got there first
            session.rollback()
    return cohort


def set_case_budget(session: Session, *, cohort: Cohort, raw: str) -> None:
    """How many experiments the cohort's learners may run per case (their next case attempts)."""
    text = raw.strip()
    budget = whole_number(text, maximum=MAX_CASE_BUDGET) or 0
    if not MIN_CASE_BUDGET <= budget <= MAX_CASE_BUDGET:
        raise InvalidCohort(
            f"the budget must be a whole number from {MIN_CASE_BUDGET} to {MAX_CASE_BUDGET}"
        )
    cohort.case_budget = budget
    session.add(cohort)
    session.commit()
