"""Saved review comments per instructor, and a learner's choice to hide their streak

`saved_comment` holds an instructor's own list of comments to reuse in reviews (the text and
its sha256, unique per owner); `practice_settings` holds, per learner, whether the practice
pages show their streak (no row: shown).

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-03 22:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As SQLModel has them today; written out so this revision never changes with it.
UTC = sqlmodel.sql.sqltypes.UTCDateTime
TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    op.create_table(
        "saved_comment",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("owner_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("text_sha256", TEXT(length=64), nullable=False),
        sa.Column("created_at", UTC(), nullable=False),
        sa.Column("updated_at", UTC(), nullable=False),
        sa.ForeignKeyConstraint(
            ["owner_id"],
            ["user.id"],
            name=op.f("fk_saved_comment_owner_id_user"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_saved_comment")),
        sa.UniqueConstraint("owner_id", "text_sha256", name=op.f("uq_saved_comment_owner_id")),
    )
    with op.batch_alter_table("saved_comment", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_saved_comment_owner_id"), ["owner_id"], unique=False)
    op.create_table(
        "practice_settings",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("learner_id", sa.Integer(), nullable=False),
        sa.Column("show_streak", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["learner_id"],
            ["user.id"],
            name=op.f("fk_practice_settings_learner_id_user"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_practice_settings")),
        sa.UniqueConstraint("learner_id", name=op.f("uq_practice_settings_learner_id")),
    )


def downgrade() -> None:
    op.drop_table("practice_settings")
    with op.batch_alter_table("saved_comment", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_saved_comment_owner_id"))
    op.drop_table("saved_comment")
