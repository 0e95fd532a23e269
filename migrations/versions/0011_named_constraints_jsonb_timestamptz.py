"""Constraints named by one convention; on PostgreSQL, JSON documents as JSONB

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-03 10:00:00

Databases made before the models had a naming convention (app/models/naming.py) have primary
and foreign keys that PostgreSQL named itself (`attempt_pkey`, `attempt_learner_id_fkey`) or that
SQLite left unnamed; now both carry the convention's names, so later migrations can drop or alter
them by name. (Alembic hands the convention to every migration's operations, so a database made
from empty since then has those names already: only what is missing or old is changed.)
PostgreSQL renames them in place; SQLite cannot, so each table is rebuilt (batch mode) with the
convention filling in the missing names. Downgrading gives back the names of before the
convention. (Every timestamp is already `timestamp with time zone` on PostgreSQL: SQLModel's
`UTCDateTime`, which 0010 uses too.)
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# The convention as of this revision, copied rather than imported so that this migration keeps
# making the same names whatever later happens to app/models/naming.py.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

# Every table, with its foreign keys as (column, referred table).
FOREIGN_KEYS: dict[str, list[tuple[str, str]]] = {
    "user": [],
    "attempt": [("learner_id", "user")],
    "metric_point": [("attempt_id", "attempt")],
    "explanation": [("attempt_id", "attempt"), ("learner_id", "user")],
    "cohort": [("instructor_id", "user")],
    "cohort_membership": [("cohort_id", "cohort"), ("learner_id", "user")],
    "submission": [
        ("learner_id", "user"),
        ("failed_attempt_id", "attempt"),
        ("fixed_attempt_id", "attempt"),
    ],
    "review": [("submission_id", "submission"), ("instructor_id", "user")],
    "replay": [("attempt_id", "attempt"), ("requested_by", "user")],
    "login_session": [("user_id", "user")],
    "login_failure": [],
}

JSON_COLUMNS = {
    "attempt": [
        "knobs",
        "environment",
        "inputs",
        "diagnostics",
        "signature",
        "numeric_predictions",
        "numeric_matched",
    ],
    "replay": ["environment"],
    "review": ["scores"],
}

# The only JSON column with a server default: attempts from before 0008 predicted no number.
DEFAULTS = {("attempt", "numeric_predictions"): "'{}'"}


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _rename_postgres_constraints(to_convention=True)
        _retype_postgres_json("jsonb")
    else:
        for table in FOREIGN_KEYS:
            # The rebuilt table gets the convention's name for each constraint reflected
            # without one (Alembic: batch mode, "Dealing with Referencing Unnamed Constraints").
            with op.batch_alter_table(
                table, recreate="always", naming_convention=NAMING_CONVENTION
            ):
                pass


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        _retype_postgres_json("json")
        _rename_postgres_constraints(to_convention=False)
    else:
        for table in FOREIGN_KEYS:
            _rebuild_sqlite_table_with_unnamed_keys(table)


def _postgres_names(table: str) -> list[tuple[str, str]]:
    """(PostgreSQL's own name, the convention's name) for the table's primary and foreign keys."""
    names = [(f"{table}_pkey", f"pk_{table}")]
    names += [
        (f"{table}_{column}_fkey", f"fk_{table}_{column}_{referred}")
        for column, referred in FOREIGN_KEYS[table]
    ]
    return names


def _rename_postgres_constraints(*, to_convention: bool) -> None:
    bind = op.get_bind()
    for table in FOREIGN_KEYS:
        present = set(
            bind.scalars(
                sa.text("SELECT conname FROM pg_constraint WHERE conrelid = CAST(:t AS regclass)"),
                {"t": f'"{table}"'},
            )
        )
        for own_name, convention_name in _postgres_names(table):
            old, new = (own_name, convention_name) if to_convention else (convention_name, own_name)
            if old in present:  # else it has the wanted name already (see the top of this file)
                # Renaming a primary key renames the index behind it too.
                op.execute(f'ALTER TABLE "{table}" RENAME CONSTRAINT "{old}" TO "{new}"')


def _retype_postgres_json(type_: str) -> None:
    for table, columns in JSON_COLUMNS.items():
        for column in columns:
            default = DEFAULTS.get((table, column))
            # A default typed json cannot stay on a jsonb column: it is set again, retyped.
            if default is not None:
                op.execute(f'ALTER TABLE "{table}" ALTER COLUMN "{column}" DROP DEFAULT')
            op.execute(
                f'ALTER TABLE "{table}" ALTER COLUMN "{column}" TYPE {type_} '
                f'USING "{column}"::{type_}'
            )
            if default is not None:
                op.execute(
                    f'ALTER TABLE "{table}" ALTER COLUMN "{column}" SET DEFAULT {default}::{type_}'
                )


def _rebuild_sqlite_table_with_unnamed_keys(table: str) -> None:
    """Back to the unnamed primary and foreign keys SQLite had before this revision (unique
    constraints and indexes were named then too, and keep their names)."""
    reflected = sa.Table(table, sa.MetaData(), autoload_with=op.get_bind())
    for constraint in reflected.constraints:
        if isinstance(constraint, (sa.PrimaryKeyConstraint, sa.ForeignKeyConstraint)):
            constraint.name = None
    with op.batch_alter_table(table, recreate="always", copy_from=reflected):
        pass
