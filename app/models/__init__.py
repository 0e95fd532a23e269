"""SQLModel tables, by topic. Import from here: `from app.models import Attempt`."""

# First, so that every table below is named by the convention (it applies as tables are defined).
from app.models.naming import NAMING_CONVENTION

# isort: split
from app.models.accounts import (
    LOCAL_LEARNER_ID,
    MAX_ROW_ID,
    Cohort,
    CohortMembership,
    LoginSession,
    Role,
    User,
)
from app.models.cases import (
    CASE_RUBRIC,
    CASE_RUBRIC_LEVELS,
    DEFAULT_CASE_BUDGET,
    CaseAttempt,
    CaseReview,
    CaseRun,
    CaseRunKind,
    CaseStage,
)
from app.models.evidence import (
    Attempt,
    AttemptStatus,
    Explanation,
    MetricPoint,
    drill_page_runs,
)
from app.models.practice import (
    CohortReviewItem,
    ReviewCard,
    ReviewLogEntry,
    ReviewRating,
    ReviewSource,
)
from app.models.replays import Replay, ReplayStatus, ReplayVerdict
from app.models.reviews import (
    RUBRIC,
    RUBRIC_LEVELS,
    Decision,
    Review,
    Submission,
    SubmissionStatus,
)
from app.models.rounds import DiagnosisRound, RoundReview
from app.models.throttle import LoginFailure
from app.models.time import as_utc, utcnow

# isort: split
# A feature's own tables, imported here so that the metadata (and Alembic) sees every table.
from app.exercises.models import ExerciseHelp, ExerciseRun
from app.revisions.models import DiagnosisRevision

__all__ = [
    "LOCAL_LEARNER_ID",
    "MAX_ROW_ID",
    "NAMING_CONVENTION",
    "RUBRIC",
    "RUBRIC_LEVELS",
    "CASE_RUBRIC",
    "CASE_RUBRIC_LEVELS",
    "DEFAULT_CASE_BUDGET",
    "Attempt",
    "DiagnosisRound",
    "DiagnosisRevision",
    "RoundReview",
    "drill_page_runs",
    "ReviewCard",
    "ReviewLogEntry",
    "ReviewRating",
    "ReviewSource",
    "CaseAttempt",
    "CohortReviewItem",
    "CaseReview",
    "CaseRun",
    "CaseRunKind",
    "CaseStage",
    "AttemptStatus",
    "Cohort",
    "CohortMembership",
    "Decision",
    "Explanation",
    "ExerciseHelp",
    "ExerciseRun",
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
    "as_utc",
    "utcnow",
]
