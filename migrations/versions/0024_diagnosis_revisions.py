"""Diagnosis revisions: a reviewed case or round diagnosis is revised when changes are asked

`diagnosis_revision` keeps each revised diagnosis as its own numbered row (unique per case attempt
or per round: the earlier text is never overwritten), the learner's note, and the instructor's
review of that revision once written.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-03 22:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As app/models/types.py has it today; written out so this revision never changes with it.
JSON_DOCUMENT = sa.JSON().with_variant(JSONB(), "postgresql")
UTC = sqlmodel.sql.sqltypes.UTCDateTime
TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "diagnosis_revision",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_attempt_id", sa.Integer(), nullable=True),
        sa.Column("round_id", sa.Integer(), nullable=True),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("diagnosis", JSON_DOCUMENT, nullable=False),
        sa.Column("note", TEXT(length=4000), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("decision", TEXT(length=20), nullable=True),
        sa.Column("scores", JSON_DOCUMENT, nullable=True),
        sa.Column("comment", TEXT(length=4000), nullable=False),
        sa.Column("reviewer_id", sa.Integer(), nullable=True),
        sa.Column("reviewed_at", UTC(), nullable=True),
        sa.CheckConstraint(
            "(case_attempt_id IS NULL) <> (round_id IS NULL)",
            name=op.f("ck_diagnosis_revision_revises_one_thing"),
        ),
        sa.ForeignKeyConstraint(
            ["case_attempt_id"],
            ["case_attempt.id"],
            name=op.f("fk_diagnosis_revision_case_attempt_id_case_attempt"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["round_id"],
            ["diagnosis_round.id"],
            name=op.f("fk_diagnosis_revision_round_id_diagnosis_round"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["learner_id"], ["user.id"], name=op.f("fk_diagnosis_revision_learner_id_user")
        ),
        sa.ForeignKeyConstraint(
            ["reviewer_id"], ["user.id"], name=op.f("fk_diagnosis_revision_reviewer_id_user")
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_diagnosis_revision")),
        sa.UniqueConstraint(
            "case_attempt_id", "number", name=op.f("uq_diagnosis_revision_case_attempt_id")
        ),
        sa.UniqueConstraint("round_id", "number", name=op.f("uq_diagnosis_revision_round_id")),
    )
    with op.batch_alter_table("diagnosis_revision", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_diagnosis_revision_learner_id"), ["learner_id"], unique=False
        )


def downgrade() -> None:
    op.drop_table("diagnosis_revision")
