"""Replays of stored commands, kept as evidence on the attempt

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 20:27:34.875805
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "replay",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("requested_by", sa.Integer(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("verdict", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=True),
        sa.Column("digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("max_relative_difference", sa.Float(), nullable=True),
        sa.Column("first_difference", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("environment", sa.JSON(), nullable=True),
        sa.Column("error", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("finished_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.ForeignKeyConstraint(["attempt_id"], ["attempt.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["requested_by"],
            ["user.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("replay", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_replay_attempt_id"), ["attempt_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("replay", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_replay_attempt_id"))

    op.drop_table("replay")
