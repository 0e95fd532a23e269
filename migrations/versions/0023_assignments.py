"""Assignments: a cohort's sets of drills, cases, curve rounds and exercises with a due date

`assignment` keeps, per cohort, a title (unique in the cohort), the due moment in UTC, the items
as a JSON list of {"kind", "key"}, and a version counting the edits.

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-03 22:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As app/models/types.py has it today; written out so this revision never changes with it.
JSON_DOCUMENT = sa.JSON().with_variant(JSONB(), "postgresql")
UTC = sqlmodel.sql.sqltypes.UTCDateTime
TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "assignment",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.Integer(), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=False),
        sa.Column("title", TEXT(length=120), nullable=False),
        sa.Column("due_at", UTC(), nullable=False),
        sa.Column("items", JSON_DOCUMENT, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("updated_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["cohort_id"],
            ["cohort.id"],
            name=op.f("fk_assignment_cohort_id_cohort"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["author_id"], ["user.id"], name=op.f("fk_assignment_author_id_user")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_assignment")),
        sa.UniqueConstraint("cohort_id", "title", name="uq_assignment_title"),
    )
    with op.batch_alter_table("assignment", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_assignment_cohort_id"), ["cohort_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("assignment", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_assignment_cohort_id"))
    op.drop_table("assignment")
