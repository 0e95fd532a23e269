"""Names for every index and constraint the tables make, from one convention.

Without it PostgreSQL invents names (`attempt_pkey`, `attempt_learner_id_fkey`) and SQLite leaves
primary and foreign keys unnamed, so a migration could not drop or alter one by the same name on
both. This is the convention Alembic's documentation recommends; migration 0011 renamed the
constraints of databases made before it.
"""

from sqlmodel import SQLModel

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Names are given as each constraint joins its table, so this must run before any table is
# defined: app/models/__init__.py imports this module first.
SQLModel.metadata.naming_convention = NAMING_CONVENTION
