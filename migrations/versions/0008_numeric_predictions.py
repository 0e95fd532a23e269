"""Attempts keep the numbers a learner predicted, and whether each matched the run

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-02 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        # Earlier attempts predicted no number: they get {}.
        batch_op.add_column(
            sa.Column(
                "numeric_predictions", sa.JSON(), nullable=False, server_default=sa.text("'{}'")
            )
        )
        batch_op.add_column(sa.Column("numeric_matched", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.drop_column("numeric_matched")
        batch_op.drop_column("numeric_predictions")
