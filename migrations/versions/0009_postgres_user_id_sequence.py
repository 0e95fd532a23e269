"""PostgreSQL: the user id sequence starts after the local learner

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-30 17:55:00

Migration 0001 inserts the local learner with the explicit id 1. SQLite picks the next id from
the table, but PostgreSQL's sequence for user.id stayed at 1, so the first account created
afterwards collided with it (and was refused as "username taken"). Moving the sequence past the
highest id fixes new databases and any already migrated; SQLite needs nothing.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(
        "SELECT setval(pg_get_serial_sequence('\"user\"', 'id'), "
        '(SELECT COALESCE(MAX(id), 1) FROM "user"))'
    )


def downgrade() -> None:
    pass  # a sequence past the highest id is right at every revision
