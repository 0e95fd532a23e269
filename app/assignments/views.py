"""What the assignment pages and the cohort summary show: each learner's standing on each of a
cohort's assignments, counted per learner, and when each learner was last active."""

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, func, select

from app.accounts.models import Cohort, User
from app.assignments.completion import completions
from app.assignments.items import Item, from_stored, title_of, titles
from app.assignments.models import Assignment
from app.assignments.service import cohort_assignments, learner_assignments
from app.assignments.standing import AssignmentState, Standing, standing
from app.cases.models import CaseAttempt
from app.grading.models import Submission
from app.models.time import as_utc
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt


@dataclass(frozen=True)
class SummaryRow:
    """One learner over the cohort's assignments: finished (on time or late), still due, overdue."""

    learner: User
    done: int
    late: int  # of the finished ones, how many after their due date
    due: int
    overdue: int
    last_active: datetime | None


@dataclass(frozen=True)
class Board:
    """A cohort's assignments and every learner's standing on each."""

    assignments: list[Assignment]
    standings: dict[tuple[int, int], Standing]  # (learner id, assignment id) -> standing
    summary: list[SummaryRow]


def last_active(session: Session, learner_ids: list[int]) -> dict[int, datetime]:
    """The latest run, case step, round answer or submission of each learner."""
    latest: dict[int, datetime] = {}
    moments = (
        (Attempt.learner_id, Attempt.created_at),
        (Submission.learner_id, Submission.created_at),
        (DiagnosisRound.learner_id, DiagnosisRound.answered_at),
        (CaseAttempt.learner_id, CaseAttempt.created_at),
        (CaseAttempt.learner_id, CaseAttempt.diagnosed_at),
        (CaseAttempt.learner_id, CaseAttempt.verdict_at),
    )
    for learner, moment in moments:
        for learner_id, when in session.exec(
            select(learner, func.max(moment))
            .where(col(learner).in_(learner_ids))
            .group_by(col(learner))
        ):
            if when is not None:
                latest[learner_id] = max(latest.get(learner_id, as_utc(when)), as_utc(when))
    return latest


def cohort_board(session: Session, *, cohort: Cohort, learners: list[User], now: datetime) -> Board:
    assignments = cohort_assignments(session, cohort_id=cohort.id or 0)
    ids = [learner.saved_id for learner in learners]
    done = completions(session, learners)
    standings = {
        (learner_id, assignment.id or 0): standing(assignment, done[learner_id], now=now)
        for learner_id in ids
        for assignment in assignments
    }
    active = last_active(session, ids) if ids else {}
    summary = []
    for learner in learners:
        states = Counter(
            standings[(learner.saved_id, assignment.id or 0)].state for assignment in assignments
        )
        summary.append(
            SummaryRow(
                learner=learner,
                done=states[AssignmentState.done] + states[AssignmentState.late],
                late=states[AssignmentState.late],
                due=states[AssignmentState.open],
                overdue=states[AssignmentState.overdue],
                last_active=active.get(learner.saved_id),
            )
        )
    return Board(assignments=assignments, standings=standings, summary=summary)


@dataclass(frozen=True)
class LearnerAssignment:
    cohort: Cohort
    standing: Standing


def my_assignments(session: Session, *, learner: User, now: datetime) -> list[LearnerAssignment]:
    done = completions(session, [learner])[learner.saved_id]
    return [
        LearnerAssignment(cohort, standing(assignment, done, now=now))
        for cohort, assignment in learner_assignments(session, learner_id=learner.saved_id)
    ]


def item_titles(assignments: list[Assignment]) -> dict[Item, str]:
    """The title of every item the assignments ask for, read once for a page."""
    known = titles()
    return {
        item: title_of(item, known)
        for assignment in assignments
        for item in from_stored(assignment.items)
    }
