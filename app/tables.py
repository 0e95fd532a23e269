"""Every table of every feature, imported so that `SQLModel.metadata` is whole.

Alembic's environment (and so the migration drift test) reads the whole metadata, and so does
every process that stores runs: `app/features.py` imports this module, because an attempt's row
has a foreign key to a round, a table another feature owns, and an insert needs both known.
Adding a feature with tables adds one line here (`tests/test_layers.py` checks none is missing).
"""

from app.accounts import models as accounts
from app.assignments import models as assignments
from app.cases import models as cases
from app.exercises import models as exercises
from app.grading import models as grading
from app.grading.revisions import models as revisions
from app.practice import models as practice
from app.practice import round_models as rounds
from app.runs import models as runs
from app.runs import replay_models as replays
from app.security import models as security

FEATURE_TABLES = (
    accounts,
    assignments,
    cases,
    exercises,
    grading,
    practice,
    rounds,
    revisions,
    runs,
    replays,
    security,
)
