"""Cases: a learner's attempt at a case, its runs, their reviews, and each cohort's budget

Revision ID: 0012
Revises: 0011
Create Date: 2026-11-30 22:20:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As app/models/types.py has it today; written out so this revision never changes with it.
JSON_DOCUMENT = sa.JSON().with_variant(JSONB(), "postgresql")
UTC = sqlmodel.sql.sqltypes.UTCDateTime
TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "case_attempt",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("case_key", TEXT(length=64), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("knobs", JSON_DOCUMENT, nullable=False),
        sa.Column("budget", sa.Integer(), nullable=False),
        sa.Column("stage", TEXT(length=16), nullable=False),
        sa.Column("diagnosis", JSON_DOCUMENT, nullable=True),
        sa.Column("diagnosed_at", UTC(), nullable=True),
        sa.Column("named_cause", TEXT(length=64), nullable=True),
        sa.Column("fix_key", TEXT(length=64), nullable=True),
        sa.Column("verdict_at", UTC(), nullable=True),
        sa.Column("score", JSON_DOCUMENT, nullable=True),
        sa.Column("revealed_at", UTC(), nullable=True),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["learner_id"], ["user.id"], name="fk_case_attempt_learner_id_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_case_attempt"),
        sa.UniqueConstraint("learner_id", "case_key", "number", name="uq_case_attempt_number"),
    )
    op.create_index("ix_case_attempt_learner_id", "case_attempt", ["learner_id"])
    op.create_index("ix_case_attempt_case_key", "case_attempt", ["case_key"])
    op.create_table(
        "case_run",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_attempt_id", sa.Integer(), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=False),
        sa.Column("kind", TEXT(length=16), nullable=False),
        sa.Column("experiment_key", TEXT(length=64), nullable=True),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["case_attempt_id"],
            ["case_attempt.id"],
            name="fk_case_run_case_attempt_id_case_attempt",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["attempt_id"],
            ["attempt.id"],
            name="fk_case_run_attempt_id_attempt",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_case_run"),
        sa.UniqueConstraint("attempt_id", name="uq_case_run_attempt"),
    )
    op.create_index("ix_case_run_case_attempt_id", "case_run", ["case_attempt_id"])
    op.create_table(
        "case_review",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_attempt_id", sa.Integer(), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("decision", TEXT(length=20), nullable=False),
        sa.Column("scores", JSON_DOCUMENT, nullable=False),
        sa.Column("comment", TEXT(length=4000), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["case_attempt_id"],
            ["case_attempt.id"],
            name="fk_case_review_case_attempt_id_case_attempt",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["instructor_id"], ["user.id"], name="fk_case_review_instructor_id_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_case_review"),
        sa.UniqueConstraint("case_attempt_id", name="uq_case_review_attempt"),
    )
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.add_column(sa.Column("case_attempt_id", sa.Integer(), nullable=True))
        batch_op.create_index("ix_attempt_case_attempt_id", ["case_attempt_id"])
        batch_op.create_foreign_key(
            "fk_attempt_case_attempt_id_case_attempt",
            "case_attempt",
            ["case_attempt_id"],
            ["id"],
            ondelete="CASCADE",
        )
    with op.batch_alter_table("cohort", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("case_budget", sa.Integer(), nullable=False, server_default="3")
        )


def downgrade() -> None:
    with op.batch_alter_table("cohort", schema=None) as batch_op:
        batch_op.drop_column("case_budget")
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.drop_constraint("fk_attempt_case_attempt_id_case_attempt", type_="foreignkey")
        batch_op.drop_index("ix_attempt_case_attempt_id")
        batch_op.drop_column("case_attempt_id")
    op.drop_table("case_review")
    op.drop_index("ix_case_run_case_attempt_id", table_name="case_run")
    op.drop_table("case_run")
    op.drop_index("ix_case_attempt_case_key", table_name="case_attempt")
    op.drop_index("ix_case_attempt_learner_id", table_name="case_attempt")
    op.drop_table("case_attempt")
