"""Streamed metric points and explain-back texts

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-29 19:28:13.295866
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "explanation",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("mechanism", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
        sa.Column("right_tool", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
        sa.Column("wrong_tool", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
        sa.Column("next_check", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["attempt_id"], ["attempt.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["learner_id"],
            ["user.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("explanation", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_explanation_attempt_id"), ["attempt_id"], unique=False)

    op.create_table(
        "metric_point",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("step", sa.Integer(), nullable=False),
        sa.Column("value", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(["attempt_id"], ["attempt.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("metric_point", schema=None) as batch_op:
        batch_op.create_index(
            "ix_metric_point_attempt_name_step", ["attempt_id", "name", "step"], unique=False
        )


def downgrade() -> None:
    with op.batch_alter_table("metric_point", schema=None) as batch_op:
        batch_op.drop_index("ix_metric_point_attempt_name_step")

    op.drop_table("metric_point")
    with op.batch_alter_table("explanation", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_explanation_attempt_id"))

    op.drop_table("explanation")
