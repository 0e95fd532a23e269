"""Metric points indexed by (attempt, id): the order every reader wants them in

Every query of metric points asks for one attempt's points after a cursor, in id order (the live
stream, the change feed's newest id, the record, the export). The old index, (attempt, name,
step), found the attempt's points but not in that order: each read sorted them, and the change
feed's newest-id look scanned all of an attempt's entries ten times a second. (attempt, id)
serves them all in order, and its entries are smaller (no metric name in each).

On PostgreSQL, CREATE INDEX blocks writes to metric_point while it builds: run this upgrade while
no run is in progress (as every upgrade of this app is run, before the web processes start).

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-01 10:20:00
"""

from collections.abc import Sequence

from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("metric_point", schema=None) as batch_op:
        batch_op.create_index("ix_metric_point_attempt_id_id", ["attempt_id", "id"], unique=False)
        batch_op.drop_index("ix_metric_point_attempt_name_step")


def downgrade() -> None:
    with op.batch_alter_table("metric_point", schema=None) as batch_op:
        batch_op.create_index(
            "ix_metric_point_attempt_name_step", ["attempt_id", "name", "step"], unique=False
        )
        batch_op.drop_index("ix_metric_point_attempt_id_id")
