"""Hidden-bug runs: an attempt whose setup the app drew, shown only once the run has ended

`attempt.hidden_setup` marks a run whose knobs and seed were drawn for the learner
(drills/practice/hidden_setups.py); the study path's drill steps count only these. Attempts from
before this revision were all set up by their learner.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-02 18:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("hidden_setup", sa.Boolean(), nullable=False, server_default=sa.false())
        )


def downgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.drop_column("hidden_setup")
