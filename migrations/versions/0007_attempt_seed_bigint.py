"""Attempt seeds are 64-bit: the web layer accepts the drills' whole seed range

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-01 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0006"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.alter_column(
            "seed", existing_type=sa.Integer(), type_=sa.BigInteger(), existing_nullable=False
        )


def downgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.alter_column(
            "seed", existing_type=sa.BigInteger(), type_=sa.Integer(), existing_nullable=False
        )
