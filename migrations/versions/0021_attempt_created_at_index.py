"""Attempts are found by when they were stored: the learners who ran lately (app/runs/fair_share.py)

The backlog splits the workers' recent time between the learners who ran or waited in the last
minute, and asks for them on every run it holds back or sends; without an index that question
reads the whole attempt table.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-03 15:00:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_attempt_created_at", "attempt", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_attempt_created_at", table_name="attempt")
