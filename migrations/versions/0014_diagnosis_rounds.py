"""Curve-diagnosis rounds, their instructor reviews, and the link from a round's run

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-01 03:40:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op
from sqlalchemy.dialects.postgresql import JSONB

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As app/models/types.py has it today; written out so this revision never changes with it.
JSON_DOCUMENT = sa.JSON().with_variant(JSONB(), "postgresql")
UTC = sqlmodel.sql.sqltypes.UTCDateTime
TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "diagnosis_round",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("variant_key", TEXT(length=160), nullable=False),
        sa.Column("drill_slug", TEXT(length=64), nullable=False),
        sa.Column("seed", sa.BigInteger(), nullable=False),
        sa.Column("knobs", JSON_DOCUMENT, nullable=False),
        sa.Column("open_for", sa.Integer(), nullable=True),
        sa.Column("diagnosis", JSON_DOCUMENT, nullable=True),
        sa.Column("score", JSON_DOCUMENT, nullable=True),
        sa.Column("answered_at", UTC(), nullable=True),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["learner_id"], ["user.id"], name="fk_diagnosis_round_learner_id_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_diagnosis_round"),
        sa.UniqueConstraint("learner_id", "day", "number", name="uq_diagnosis_round_number"),
        sa.UniqueConstraint("open_for", name="uq_diagnosis_round_open_for"),
    )
    op.create_index("ix_diagnosis_round_learner_id", "diagnosis_round", ["learner_id"])
    op.create_table(
        "round_review",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("instructor_id", sa.Integer(), nullable=False),
        sa.Column("decision", TEXT(length=20), nullable=False),
        sa.Column("scores", JSON_DOCUMENT, nullable=False),
        sa.Column("comment", TEXT(length=4000), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["round_id"],
            ["diagnosis_round.id"],
            name="fk_round_review_round_id_diagnosis_round",
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["instructor_id"], ["user.id"], name="fk_round_review_instructor_id_user"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_round_review"),
        sa.UniqueConstraint("round_id", name="uq_round_review_round"),
    )
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.add_column(sa.Column("round_id", sa.Integer(), nullable=True))
        batch_op.create_index("ix_attempt_round_id", ["round_id"])
        batch_op.create_foreign_key(
            "fk_attempt_round_id_diagnosis_round",
            "diagnosis_round",
            ["round_id"],
            ["id"],
            ondelete="CASCADE",
        )


def downgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.drop_constraint("fk_attempt_round_id_diagnosis_round", type_="foreignkey")
        batch_op.drop_index("ix_attempt_round_id")
        batch_op.drop_column("round_id")
    op.drop_table("round_review")
    op.drop_index("ix_diagnosis_round_learner_id", table_name="diagnosis_round")
    op.drop_table("diagnosis_round")
