"""Attempts carry their queue turn: a learner's runs are handed out in turn with everyone else's

A run stored while its learner already had k runs queued or running gets turn k; the workers
take lower turns first (app/runs/fair_share.py), so one learner's backlog cannot hold up the class.
Attempts from before this revision are all turn 0 (first come, first served, as they were).

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-01 20:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("queue_turn", sa.Integer(), server_default=sa.text("0"), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.drop_column("queue_turn")
