"""Server-side login sessions: logging out revokes the cookie

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 21:03:13.699063
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "login_session",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("token_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.Column("created_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["user.id"], ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("login_session", schema=None) as batch_op:
        batch_op.create_index(
            batch_op.f("ix_login_session_token_hash"), ["token_hash"], unique=True
        )
        batch_op.create_index(batch_op.f("ix_login_session_user_id"), ["user_id"], unique=False)


def downgrade() -> None:
    with op.batch_alter_table("login_session", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_login_session_user_id"))
        batch_op.drop_index(batch_op.f("ix_login_session_token_hash"))

    op.drop_table("login_session")
