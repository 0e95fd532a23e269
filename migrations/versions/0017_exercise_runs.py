"""Exercise runs: an attempt may be a learner's code, judged in a sandbox

`attempt.exercise_slug` marks such a run (it is listed with its exercise, never among the
drill's attempts); `exercise_run` keeps its code, diff, checks and output; `exercise_help`
keeps, per learner and exercise, how many hints were revealed and when the solution was shown.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-01 23:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As app/models/types.py has it today; written out so this revision never changes with it.
JSON_DOCUMENT = sa.JSON().with_variant(JSONB(), "postgresql")
UTC = sqlmodel.sql.sqltypes.UTCDateTime
TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.add_column(sa.Column("exercise_slug", TEXT(length=64), nullable=True))
        batch_op.create_index(
            batch_op.f("ix_attempt_exercise_slug"), ["exercise_slug"], unique=False
        )
    op.create_table(
        "exercise_run",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("exercise_slug", TEXT(length=64), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("code_sha256", TEXT(length=64), nullable=False),
        sa.Column("diff", sa.Text(), nullable=False),
        sa.Column("hints_taken", sa.Integer(), nullable=False),
        sa.Column("solution_shown", sa.Boolean(), nullable=False),
        sa.Column("judgement", TEXT(length=16), nullable=True),
        sa.Column("checks", JSON_DOCUMENT, nullable=True),
        sa.Column("stdout", sa.Text(), nullable=True),
        sa.Column("stderr", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["attempt_id"],
            ["attempt.id"],
            name=op.f("fk_exercise_run_attempt_id_attempt"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_exercise_run")),
        sa.UniqueConstraint("attempt_id", name=op.f("uq_exercise_run_attempt_id")),
    )
    with op.batch_alter_table("exercise_run", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_exercise_run_exercise_slug"), ["exercise_slug"], unique=False
        )
    op.create_table(
        "exercise_help",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("exercise_slug", TEXT(length=64), nullable=False),
        sa.Column("hints_taken", sa.Integer(), nullable=False),
        sa.Column("solution_shown_at", UTC(), nullable=True),
        sa.Column("updated_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["learner_id"],
            ["user.id"],
            name=op.f("fk_exercise_help_learner_id_user"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_exercise_help")),
        sa.UniqueConstraint(
            "learner_id", "exercise_slug", name=op.f("uq_exercise_help_learner_id")
        ),
    )
    with op.batch_alter_table("exercise_help", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_exercise_help_learner_id"), ["learner_id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("exercise_help")
    op.drop_table("exercise_run")
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_attempt_exercise_slug"))
        batch_op.drop_column("exercise_slug")
