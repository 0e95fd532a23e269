"""The tables' shared base: the naming convention, column types and the clock.

Each feature keeps its own tables (`app/runs/models.py`, `app/cases/models.py`, ...). This package
holds only what all of them share, and every table module imports from it first, so the naming
convention is on the metadata before any table is defined. `app/tables.py` imports every
feature's tables when something needs the whole metadata (Alembic, the migration drift test).
"""

from app.models.naming import NAMING_CONVENTION
from app.models.time import as_utc, utcnow
from app.models.types import JSONDocument

__all__ = ["NAMING_CONVENTION", "JSONDocument", "as_utc", "utcnow"]
