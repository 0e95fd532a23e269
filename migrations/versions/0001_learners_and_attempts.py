"""Learners and attempts (the evidence records)

Revision ID: 0001
Revises:
Create Date: 2026-11-29 19:28:13.295866
"""

from collections.abc import Sequence
from datetime import datetime

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "user",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("username", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("display_name", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("role", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("user", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_user_username"), ["username"], unique=True)

    op.create_table(
        "attempt",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("drill_slug", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("drill_version", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("hypothesis", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("prediction_text", sqlmodel.sql.sqltypes.AutoString(length=2000), nullable=False),
        sa.Column("predicted_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("knobs", sa.JSON(), nullable=False),
        sa.Column("seed", sa.Integer(), nullable=False),
        sa.Column("command", sqlmodel.sql.sqltypes.AutoString(length=1000), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=16), nullable=False),
        sa.Column("error", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=True),
        sa.Column("environment", sa.JSON(), nullable=True),
        sa.Column("inputs", sa.JSON(), nullable=True),
        sa.Column("diagnostics", sa.JSON(), nullable=True),
        sa.Column("signature", sa.JSON(), nullable=True),
        sa.Column(
            "observed_hypothesis", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True
        ),
        sa.Column("digest", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=True),
        sa.Column("worker", sqlmodel.sql.sqltypes.AutoString(length=200), nullable=True),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.Column("started_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("finished_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=True),
        sa.Column("compute_s", sa.Float(), nullable=True),
        sa.ForeignKeyConstraint(
            ["learner_id"],
            ["user.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_attempt_drill_slug"), ["drill_slug"], unique=False)
        batch_op.create_index(batch_op.f("ix_attempt_learner_id"), ["learner_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_attempt_status"), ["status"], unique=False)

    # Until accounts exist every attempt belongs to this local learner (id 1, LOCAL_LEARNER_ID).
    users = sa.table(
        "user",
        sa.column("id", sa.Integer()),
        sa.column("username", sa.String()),
        sa.column("display_name", sa.String()),
        sa.column("role", sa.String()),
        sa.column("created_at", sa.DateTime()),
    )
    op.bulk_insert(
        users,
        [
            {
                "id": 1,
                "username": "local-learner",
                "display_name": "Local learner",
                "role": "learner",
                "created_at": datetime(2026, 11, 29),
            }
        ],
    )


def downgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_attempt_status"))
        batch_op.drop_index(batch_op.f("ix_attempt_learner_id"))
        batch_op.drop_index(batch_op.f("ix_attempt_drill_slug"))

    op.drop_table("attempt")
    with op.batch_alter_table("user", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_user_username"))

    op.drop_table("user")
