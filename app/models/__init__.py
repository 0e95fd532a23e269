"""SQLModel tables, by topic. Import from here: `from app.models import Attempt`."""

from app.models.accounts import (
    LOCAL_LEARNER_ID,
    MAX_ROW_ID,
    Cohort,
    CohortMembership,
    LoginSession,
    Role,
    User,
)
from app.models.evidence import Attempt, AttemptStatus, Explanation, MetricPoint
from app.models.replays import Replay, ReplayStatus, ReplayVerdict
from app.models.reviews import RUBRIC, Decision, Review, Submission, SubmissionStatus
from app.models.throttle import LoginFailure
from app.models.time import utcnow

__all__ = [
    "LOCAL_LEARNER_ID",
    "MAX_ROW_ID",
    "RUBRIC",
    "Attempt",
    "AttemptStatus",
    "Cohort",
    "CohortMembership",
    "Decision",
    "Explanation",
    "LoginFailure",
    "LoginSession",
    "MetricPoint",
    "Replay",
    "ReplayStatus",
    "ReplayVerdict",
    "Review",
    "Role",
    "Submission",
    "SubmissionStatus",
    "User",
    "utcnow",
]
