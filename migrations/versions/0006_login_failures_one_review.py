"""Failed logins kept in the database; one review per submitted version

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-30 16:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "login_failure",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("scope", sqlmodel.sql.sqltypes.AutoString(length=8), nullable=False),
        sa.Column("key_hash", sqlmodel.sql.sqltypes.AutoString(length=64), nullable=False),
        sa.Column("failed_at", sqlmodel.sql.sqltypes.UTCDateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id"),
    )
    with op.batch_alter_table("login_failure", schema=None) as batch_op:
        batch_op.create_index(
            "ix_login_failure_scope_key_at", ["scope", "key_hash", "failed_at"], unique=False
        )
        batch_op.create_index(batch_op.f("ix_login_failure_failed_at"), ["failed_at"])
    # Races before this revision could store two reviews of one version: keep the first.
    op.execute(
        "DELETE FROM review WHERE id NOT IN (SELECT MIN(id) FROM review GROUP BY submission_id)"
    )
    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.create_unique_constraint("uq_review_submission", ["submission_id"])


def downgrade() -> None:
    with op.batch_alter_table("review", schema=None) as batch_op:
        batch_op.drop_constraint("uq_review_submission", type_="unique")
    with op.batch_alter_table("login_failure", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_login_failure_failed_at"))
        batch_op.drop_index("ix_login_failure_scope_key_at")
    op.drop_table("login_failure")
