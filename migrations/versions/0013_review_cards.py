"""Spaced review: cards, the log of every review, and the items a cohort's instructor writes

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-01 00:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As app/models/types.py has it today; written out so this revision never changes with it.
JSON_DOCUMENT = sa.JSON().with_variant(JSONB(), "postgresql")
UTC = sqlmodel.sql.sqltypes.UTCDateTime
TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "review_card",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("item_key", TEXT(length=160), nullable=False),
        sa.Column("source", TEXT(length=16), nullable=False),
        sa.Column("attempt_id", sa.Integer(), nullable=True),
        sa.Column("case_attempt_id", sa.Integer(), nullable=True),
        sa.Column("schedule", JSON_DOCUMENT, nullable=True),
        sa.Column("due_at", UTC(), nullable=False),
        sa.Column("reviews", sa.Integer(), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(["learner_id"], ["user.id"], name="fk_review_card_learner_id_user"),
        sa.ForeignKeyConstraint(
            ["attempt_id"], ["attempt.id"], name="fk_review_card_attempt_id_attempt"
        ),
        sa.ForeignKeyConstraint(
            ["case_attempt_id"],
            ["case_attempt.id"],
            name="fk_review_card_case_attempt_id_case_attempt",
        ),
        sa.PrimaryKeyConstraint("id", name="pk_review_card"),
        sa.UniqueConstraint("learner_id", "item_key", name="uq_review_card_item"),
    )
    op.create_index("ix_review_card_learner_id", "review_card", ["learner_id"])
    op.create_index("ix_review_card_due_at", "review_card", ["due_at"])
    op.create_table(
        "review_log",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("card_id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("item_key", TEXT(length=160), nullable=False),
        sa.Column("answer", TEXT(length=2000), nullable=False),
        sa.Column("rating", TEXT(length=8), nullable=False),
        sa.Column("elapsed_days", sa.Float(), nullable=True),
        sa.Column("retrievability", sa.Float(), nullable=True),
        sa.Column("due_after", UTC(), nullable=False),
        sa.Column("reviewed_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["card_id"],
            ["review_card.id"],
            name="fk_review_log_card_id_review_card",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(["learner_id"], ["user.id"], name="fk_review_log_learner_id_user"),
        sa.PrimaryKeyConstraint("id", name="pk_review_log"),
    )
    op.create_index("ix_review_log_card_id", "review_log", ["card_id"])
    op.create_index("ix_review_log_learner_id", "review_log", ["learner_id"])
    op.create_index("ix_review_log_reviewed_at", "review_log", ["reviewed_at"])
    op.create_table(
        "cohort_review_item",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("cohort_id", sa.Integer(), nullable=False),
        sa.Column("author_id", sa.Integer(), nullable=False),
        sa.Column("prompt", TEXT(length=1000), nullable=False),
        sa.Column("answer", TEXT(length=4000), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["cohort_id"],
            ["cohort.id"],
            name="fk_cohort_review_item_cohort_id_cohort",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["author_id"], ["user.id"], name="fk_cohort_review_item_author_id_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_cohort_review_item"),
    )
    op.create_index("ix_cohort_review_item_cohort_id", "cohort_review_item", ["cohort_id"])


def downgrade() -> None:
    op.drop_index("ix_cohort_review_item_cohort_id", table_name="cohort_review_item")
    op.drop_table("cohort_review_item")
    op.drop_index("ix_review_log_reviewed_at", table_name="review_log")
    op.drop_index("ix_review_log_learner_id", table_name="review_log")
    op.drop_index("ix_review_log_card_id", table_name="review_log")
    op.drop_table("review_log")
    op.drop_index("ix_review_card_due_at", table_name="review_card")
    op.drop_index("ix_review_card_learner_id", table_name="review_card")
    op.drop_table("review_card")
