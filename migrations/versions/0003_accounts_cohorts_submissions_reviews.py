"""Accounts (passwords), cohorts, evidence submissions and reviews

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 19:47:53.120994
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "cohort",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sqlmodel.sql.sqltypes.AutoString(length=120), nullable=False),
        sa.Column("join_code", sqlmodel.sql.sqltypes.AutoString(length=32), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instructor_id"],
            ["user.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("cohort", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_cohort_instructor_id"), ["instructor_id"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_cohort_join_code"), ["join_code"], unique=True)

    op.create_table(
        "cohort_membership",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("joined_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["cohort_id"], ["cohort.id"], ondelete="CASCADE"),
        sa.ForeignKeyConstraint(
            ["learner_id"],
            ["user.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("cohort_id", "learner_id", name="uq_cohort_learner"),
    )
    with op.batch_alter_table("cohort_membership", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_cohort_membership_cohort_id"), ["cohort_id"], unique=False
        )
        batch_op.create_index(
            batch_op.f("ix_cohort_membership_learner_id"), ["learner_id"], unique=False
        )

    op.create_table(
        "submission",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("drill_slug", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("status", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("failed_attempt_id", sa.Integer(), nullable=False),
        sa.Column("fixed_attempt_id", sa.Integer(), nullable=False),
        sa.Column("mechanism", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=False),
        sa.Column("right_tool", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=False),
        sa.Column("wrong_tool", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=False),
        sa.Column("next_check", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["failed_attempt_id"],
            ["attempt.id"],
        ),
        sa.ForeignKeyConstraint(
            ["fixed_attempt_id"],
            ["attempt.id"],
        ),
        sa.ForeignKeyConstraint(
            ["learner_id"],
            ["user.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("learner_id", "drill_slug", "version", name="uq_submission_version"),
    )
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_submission_drill_slug"), ["drill_slug"], unique=False)
        batch_op.create_index(batch_op.f("ix_submission_learner_id"), ["learner_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_submission_status"), ["status"], unique=False)

    op.create_table(
        "review",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("submission_id", sa.Integer(), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("decision", sqlmodel.sql.sqltypes.AutoString(length=20), nullable=False),
        sa.Column("scores", sa.JSON(), nullable=False),
        sa.Column("comment", sqlmodel.sql.sqltypes.AutoString(length=4000), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["instructor_id"],
            ["user.id"],
        ),
        sa.ForeignKeyConstraint(["submission_id"], ["submission.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_review_submission_id"), ["submission_id"], unique=False
        )

    with op.batch_alter_table("user", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("password_hash", sqlmodel.sql.sqltypes.AutoString(length=255), nullable=True)
        )


def downgrade() -> None:
    with op.batch_alter_table("user", schema=None) as batch_op:
        batch_op.drop_column("password_hash")

    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_review_submission_id"))

    op.drop_table("review")
    with op.batch_alter_table("submission", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_submission_status"))
        batch_op.drop_index(batch_op.f("ix_submission_learner_id"))
        batch_op.drop_index(batch_op.f("ix_submission_drill_slug"))

    op.drop_table("submission")
    with op.batch_alter_table("cohort_membership", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_cohort_membership_learner_id"))
        batch_op.drop_index(batch_op.f("ix_cohort_membership_cohort_id"))

    op.drop_table("cohort_membership")
    with op.batch_alter_table("cohort", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_cohort_join_code"))
        batch_op.drop_index(batch_op.f("ix_cohort_instructor_id"))

    op.drop_table("cohort")
