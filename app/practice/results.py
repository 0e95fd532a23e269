"""A cohort's spaced review, for its instructor: who has reviews due or overdue, how much is
retained, which items are failed most often, and how each learner reads curve rounds."""

from collections import Counter
from dataclasses import dataclass
from datetime import datetime

from sqlmodel import Session, col, select

from app.accounts.models import User
from app.practice.items import item_title
from app.practice.models import ReviewCard, ReviewLogEntry, ReviewRating
from app.practice.round_models import DiagnosisRound
from app.practice.service import day_start

# Retention is read on reviews made at least this long after the item's previous review:
# recalling something seen minutes ago says little about memory.
RETENTION_GAP_DAYS = 1.0
HARDEST_SHOWN = 5


@dataclass(frozen=True)
class LearnerPractice:
    learner: User
    due_now: int  # cards due at this moment
    overdue: int  # of which, due since before today
    reviews: int  # reviews logged, ever
    retention: float | None  # share rated good or easy after a gap of a day or more
    rounds: int  # curve rounds answered
    rounds_read: int  # of which the leading hypothesis matched the run's own reading


@dataclass(frozen=True)
class HardItem:
    key: str
    title: str
    failed: int  # rated "again"
    reviews: int


@dataclass(frozen=True)
class CohortPractice:
    learners: list[LearnerPractice]
    retention: float | None
    retention_reviews: int  # how many reviews the cohort's retention rests on
    hardest: list[HardItem]


def _share(kept: int, total: int) -> float | None:
    return kept / total if total else None


def cohort_practice(session: Session, learners: list[User], *, now: datetime) -> CohortPractice:
    ids = [learner.saved_id for learner in learners]
    today = day_start(now)
    due = Counter[int]()
    overdue = Counter[int]()
    for learner_id, due_at in session.exec(
        select(ReviewCard.learner_id, ReviewCard.due_at).where(
            col(ReviewCard.learner_id).in_(ids), col(ReviewCard.due_at) <= now
        )
    ):
        due[learner_id] += 1
        overdue[learner_id] += due_at < today
    entries = session.exec(
        select(
            ReviewLogEntry.learner_id,
            ReviewLogEntry.item_key,
            ReviewLogEntry.rating,
            ReviewLogEntry.elapsed_days,
        ).where(col(ReviewLogEntry.learner_id).in_(ids))
    ).all()
    reviews = Counter(learner_id for learner_id, *_ in entries)
    recalled = {ReviewRating.good.value, ReviewRating.easy.value}
    spaced = [
        (learner_id, rating in recalled)
        for learner_id, _key, rating, elapsed in entries
        if elapsed is not None and elapsed >= RETENTION_GAP_DAYS
    ]
    spaced_by = Counter(learner_id for learner_id, _ in spaced)
    kept_by = Counter(learner_id for learner_id, kept in spaced if kept)
    failed = Counter(key for _l, key, rating, _e in entries if rating == ReviewRating.again)
    seen = Counter(key for _l, key, _r, _e in entries)
    hardest = [
        HardItem(key, item_title(key), count, seen[key])
        for key, count in failed.most_common(HARDEST_SHOWN)
    ]
    rounds = Counter[int]()
    rounds_read = Counter[int]()
    for learner_id, score in session.exec(
        select(DiagnosisRound.learner_id, DiagnosisRound.score).where(
            col(DiagnosisRound.learner_id).in_(ids), col(DiagnosisRound.answered_at).is_not(None)
        )
    ):
        rounds[learner_id] += 1
        rounds_read[learner_id] += bool((score or {}).get("leading_right"))
    rows = [
        LearnerPractice(
            learner=learner,
            due_now=due[learner.saved_id],
            overdue=overdue[learner.saved_id],
            reviews=reviews[learner.saved_id],
            retention=_share(kept_by[learner.saved_id], spaced_by[learner.saved_id]),
            rounds=rounds[learner.saved_id],
            rounds_read=rounds_read[learner.saved_id],
        )
        for learner in learners
    ]
    return CohortPractice(
        learners=rows,
        retention=_share(sum(kept_by.values()), len(spaced)),
        retention_reviews=len(spaced),
        hardest=hardest,
    )
