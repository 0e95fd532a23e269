"""Where each learner stands on each drill: not started → attempted → pending → accepted, or
changes requested."""

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from sqlmodel import Session, col, func, select

from app.accounts.models import Cohort, CohortMembership, User
from app.grading.models import Review, Submission
from app.runs.models import Attempt, drill_page_runs
from drills.core.registry import all_drills


class DrillProgress(StrEnum):
    not_started = "not started"
    attempted = "attempted"
    pending = "pending review"
    changes_requested = "changes requested"
    accepted = "accepted"


_BY_SUBMISSION = {
    "pending": DrillProgress.pending,
    "changes_requested": DrillProgress.changes_requested,
    "accepted": DrillProgress.accepted,
}


def is_first_visit(statuses: dict[str, str]) -> bool:
    """Whether a learner's row of the grid says they have started no drill yet."""
    return all(status == DrillProgress.not_started for status in statuses.values())


def progress_grid(session: Session, *, learner_ids: Iterable[int]) -> dict[int, dict[str, str]]:
    """learner id -> drill slug -> DrillProgress, for every drill in the catalogue."""
    ids = list(learner_ids)
    grid: dict[int, dict[str, str]] = {
        learner: {drill.slug: DrillProgress.not_started for drill in all_drills()}
        for learner in ids
    }
    attempted = session.exec(
        select(Attempt.learner_id, Attempt.drill_slug)
        .where(col(Attempt.learner_id).in_(ids), drill_page_runs())
        .distinct()
    ).all()
    for learner, slug in attempted:
        if slug in grid[learner]:
            grid[learner][slug] = DrillProgress.attempted
    # Ascending versions: the newest submission's status wins.
    submissions = session.exec(
        select(Submission)
        .where(col(Submission.learner_id).in_(ids))
        .order_by(col(Submission.version))
    ).all()
    for submission in submissions:
        if submission.drill_slug in grid[submission.learner_id]:
            status = _BY_SUBMISSION[submission.status]
            grid[submission.learner_id][submission.drill_slug] = status
    return grid


@dataclass(frozen=True)
class DrillStanding:
    """One learner on one drill, for the catalogue's card: where the work stands, how many runs,
    and how many of their predictions the runs bore out."""

    status: str
    runs: int
    matched: int


def catalogue_standing(session: Session, *, learner_id: int) -> dict[str, DrillStanding]:
    statuses = progress_grid(session, learner_ids=[learner_id])[learner_id]
    counts = session.exec(
        select(
            Attempt.drill_slug,
            func.count(),
            func.count().filter(col(Attempt.observed_hypothesis) == col(Attempt.hypothesis)),
        )
        .where(Attempt.learner_id == learner_id, drill_page_runs())
        .group_by(col(Attempt.drill_slug))
    ).all()
    runs = {slug: (int(total), int(matched)) for slug, total, matched in counts}
    return {
        slug: DrillStanding(status, *runs.get(slug, (0, 0))) for slug, status in statuses.items()
    }


def work_links(session: Session, *, learner_ids: Iterable[int]) -> dict[tuple[int, str], str]:
    """(learner id, drill slug) -> the page of the work a grid cell summarises: the newest
    submission once there is one, else the newest attempt of the drill (none: not started)."""
    ids = list(learner_ids)
    links: dict[tuple[int, str], str] = {}
    attempts = session.exec(
        select(Attempt.learner_id, Attempt.drill_slug, func.max(Attempt.id))
        .where(col(Attempt.learner_id).in_(ids), drill_page_runs())
        .group_by(col(Attempt.learner_id), col(Attempt.drill_slug))
    ).all()
    for learner, slug, attempt_id in attempts:
        links[(learner, slug)] = f"/attempts/{attempt_id}"
    # Ascending versions: the newest submission wins, as in progress_grid.
    submissions = session.exec(
        select(Submission.learner_id, Submission.drill_slug, Submission.id)
        .where(col(Submission.learner_id).in_(ids))
        .order_by(col(Submission.version))
    ).all()
    for learner, slug, submission_id in submissions:
        links[(learner, slug)] = f"/submissions/{submission_id}"
    return links


def cohort_learners(session: Session, *, cohort: Cohort) -> list[User]:
    return list(
        session.exec(
            select(User)
            .join(CohortMembership, col(CohortMembership.learner_id) == col(User.id))
            .where(CohortMembership.cohort_id == cohort.id)
            .order_by(col(User.username))
        ).all()
    )


def latest_feedback(session: Session, *, learner_id: int) -> dict[str, tuple[Submission, Review]]:
    """drill slug -> the learner's newest reviewed submission of it and that review."""
    rows = session.exec(
        select(Submission, Review)
        .join(Review, col(Review.submission_id) == col(Submission.id))
        .where(Submission.learner_id == learner_id)
        .order_by(col(Submission.version), col(Review.id))
    ).all()
    return {submission.drill_slug: (submission, review) for submission, review in rows}
