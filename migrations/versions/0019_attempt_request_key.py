"""Attempts carry the key of the request that started them: a double submit starts one run

`attempt.request_key` holds the drill form's one-time token (or an API client's
Idempotency-Key); (learner_id, request_key) is unique, so a second POST with the same key finds
the first run in whichever web process it lands. Attempts from before this revision have none.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-02 10:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT = sqlmodel.sql.sqltypes.AutoString


def upgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.add_column(sa.Column("request_key", TEXT(length=64), nullable=True))
        batch_op.create_unique_constraint(
            batch_op.f("uq_attempt_learner_id"), ["learner_id", "request_key"]
        )


def downgrade() -> None:
    with op.batch_alter_table("attempt", schema=None) as batch_op:
        batch_op.drop_constraint(batch_op.f("uq_attempt_learner_id"), type_="unique")
        batch_op.drop_column("request_key")
