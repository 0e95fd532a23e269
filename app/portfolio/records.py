"""Everything one export shows, read from the database once, in a handful of queries.

The statements and the HTML page are both built from these records, so the two files of an
export always agree, and a learner with hundreds of attempts costs a few queries rather than a
few per attempt.
"""

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from app.accounts.models import User
from app.cases.models import CaseAttempt, CaseStage
from app.exercises.models import ExerciseRun
from app.grading.models import Review, Submission
from app.practice.models import ReviewLogEntry
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt, Explanation, MetricPoint, drill_page_runs
from app.runs.replay_models import Replay

Series = dict[str, list[list[Any]]]


@dataclass
class LearnerRecords:
    learner: User
    attempts: list[Attempt] = field(default_factory=list)
    submissions: list[Submission] = field(default_factory=list)
    # Revealed cases only: an open case's draw names the cause it hides.
    case_attempts: list[CaseAttempt] = field(default_factory=list)
    # Every spaced review: what was typed from memory, and the rating.
    review_log: list[ReviewLogEntry] = field(default_factory=list)
    # Answered curve rounds only: an open round's draw names what it hides.
    rounds: list[DiagnosisRound] = field(default_factory=list)
    # Finished exercise runs, each with its code, diff and checks.
    exercise_runs: list[tuple[Attempt, ExerciseRun]] = field(default_factory=list)


@dataclass
class Records:
    learners: list[LearnerRecords]
    series: dict[int, Series]  # by attempt id, each in the order the drill reported it
    reviews: dict[int, list[Review]]  # by submission id, oldest first
    explanations: dict[int, Explanation]  # the latest one, by attempt id
    replays: dict[int, list[Replay]]  # by attempt id, oldest first
    people: dict[int, User]  # reviewers (and the learners themselves), by id

    def person(self, user_id: int) -> User | None:
        return self.people.get(user_id)


def load_records(session: Session, learners: list[User]) -> Records:
    ids = [learner.saved_id for learner in learners]
    by_learner = {learner.saved_id: LearnerRecords(learner) for learner in learners}
    for attempt in session.exec(
        select(Attempt)
        .where(col(Attempt.learner_id).in_(ids), drill_page_runs())
        .order_by(col(Attempt.id))
    ):
        by_learner[attempt.learner_id].attempts.append(attempt)
    for submission in session.exec(
        select(Submission).where(col(Submission.learner_id).in_(ids)).order_by(col(Submission.id))
    ):
        by_learner[submission.learner_id].submissions.append(submission)
    for case_attempt in session.exec(
        select(CaseAttempt)
        .where(col(CaseAttempt.learner_id).in_(ids), CaseAttempt.stage == CaseStage.revealed)
        .order_by(col(CaseAttempt.id))
    ):
        by_learner[case_attempt.learner_id].case_attempts.append(case_attempt)
    for entry in session.exec(
        select(ReviewLogEntry)
        .where(col(ReviewLogEntry.learner_id).in_(ids))
        .order_by(col(ReviewLogEntry.id))
    ):
        by_learner[entry.learner_id].review_log.append(entry)
    for diagnosis_round in session.exec(
        select(DiagnosisRound)
        .where(
            col(DiagnosisRound.learner_id).in_(ids), col(DiagnosisRound.answered_at).is_not(None)
        )
        .order_by(col(DiagnosisRound.id))
    ):
        by_learner[diagnosis_round.learner_id].rounds.append(diagnosis_round)
    for attempt, exercise_run in session.exec(
        select(Attempt, ExerciseRun)
        .join(ExerciseRun, col(ExerciseRun.attempt_id) == col(Attempt.id))
        .where(col(Attempt.learner_id).in_(ids), col(Attempt.finished_at).is_not(None))
        .order_by(col(Attempt.id))
    ):
        by_learner[attempt.learner_id].exercise_runs.append((attempt, exercise_run))
    reviews: dict[int, list[Review]] = defaultdict(list)
    for review in session.exec(
        select(Review)
        .join(Submission, col(Submission.id) == col(Review.submission_id))
        .where(col(Submission.learner_id).in_(ids))
        .order_by(col(Review.id))
    ):
        reviews[review.submission_id].append(review)
    reviewer_ids = {review.instructor_id for items in reviews.values() for review in items}
    people = {learner.saved_id: learner for learner in learners}
    if reviewer_ids - people.keys():
        for user in session.exec(select(User).where(col(User.id).in_(reviewer_ids))):
            people[user.saved_id] = user
    return Records(
        learners=[by_learner[i] for i in ids],
        series=_series(session, ids),
        reviews=dict(reviews),
        explanations=_latest_explanations(session, ids),
        replays=_replays(session, ids),
        people=people,
    )


def _series(session: Session, learner_ids: list[int]) -> dict[int, Series]:
    # Plain columns, not ORM objects: a learner's points run into the hundreds of thousands.
    rows = session.exec(
        select(MetricPoint.attempt_id, MetricPoint.name, MetricPoint.step, MetricPoint.value)
        .join(Attempt, col(Attempt.id) == col(MetricPoint.attempt_id))
        .where(col(Attempt.learner_id).in_(learner_ids))
        # Insertion order: series come out in the order the drill first reported them.
        .order_by(col(MetricPoint.id))
    ).all()
    series: dict[int, Series] = defaultdict(lambda: defaultdict(list))
    for attempt_id, name, step, value in rows:
        series[attempt_id][name].append([step, value])
    return {attempt_id: dict(by_name) for attempt_id, by_name in series.items()}


def _latest_explanations(session: Session, learner_ids: list[int]) -> dict[int, Explanation]:
    latest: dict[int, Explanation] = {}
    for explanation in session.exec(
        select(Explanation)
        .where(col(Explanation.learner_id).in_(learner_ids))
        .order_by(col(Explanation.id))
    ):
        latest[explanation.attempt_id] = explanation  # ascending ids: the newest wins
    return latest


def _replays(session: Session, learner_ids: list[int]) -> dict[int, list[Replay]]:
    replays: dict[int, list[Replay]] = defaultdict(list)
    for replay in session.exec(
        select(Replay)
        .join(Attempt, col(Attempt.id) == col(Replay.attempt_id))
        .where(col(Attempt.learner_id).in_(learner_ids))
        .order_by(col(Replay.id))
    ):
        replays[replay.attempt_id].append(replay)
    return dict(replays)
