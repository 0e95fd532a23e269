"""Exercise help steps and instructors' comments on exercise runs

`exercise_help_step` keeps each rung of the help ladder a learner took (hint 1, hint 2, ...,
the solution) with its time, once; `exercise_run_comment` keeps what an instructor wrote on a
learner's exercise run, which the learner reads on that run's page.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-04 12:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

UTC = sqlmodel.sql.sqltypes.UTCDateTime
TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "exercise_help_step",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("exercise_slug", TEXT(length=64), nullable=False),
        sa.Column("step", TEXT(length=16), nullable=False),
        sa.Column("taken_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["learner_id"],
            ["user.id"],
            name=op.f("fk_exercise_help_step_learner_id_user"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_exercise_help_step")),
        sa.UniqueConstraint(
            "learner_id", "exercise_slug", "step", name=op.f("uq_exercise_help_step_learner_id")
        ),
    )
    with op.batch_alter_table("exercise_help_step", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_exercise_help_step_learner_id"), ["learner_id"], unique=False
        )
    op.create_table(
        "exercise_run_comment",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["attempt_id"],
            ["attempt.id"],
            name=op.f("fk_exercise_run_comment_attempt_id_attempt"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["author_id"], ["user.id"], name=op.f("fk_exercise_run_comment_author_id_user")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_exercise_run_comment")),
    )
    with op.batch_alter_table("exercise_run_comment", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_exercise_run_comment_attempt_id"), ["attempt_id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("exercise_run_comment")
    op.drop_table("exercise_help_step")
