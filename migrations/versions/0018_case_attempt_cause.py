"""A case attempt stores the cause its draw planted

Until now a case's cause was fixed by its key; now each attempt draws one of the case's
look-alike causes, so the attempt must remember which. Attempts made before this revision had
the one cause their case had then: they are filled in from that list, written out here so the
revision never changes with the case pool.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-02 11:00:00
"""

from collections.abc import Sequence

import sqlalchemy as sa
import sqlmodel.sql.sqltypes
from alembic import op

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TEXT = sqlmodel.sql.sqltypes.AutoString

# case key -> the cause every attempt at it had before causes were drawn.
CAUSE_BEFORE_DRAWS = {
    "half-way-there": "features-detached",
    "first-step-crash": "loss-from-number",
    "borrowed-eval-loop": "forward-without-recording",
    "stuck-at-one-point-three": "labels-two-ahead",
    "better-than-the-entropy": "attention-sees-ahead",
    "new-collator-low-loss": "padding-averaged-in",
    "five-percent-slower": "positive-branch-unscaled",
    "short-rows-score-low": "mean-over-padding",
    "ready-to-merge": "code-is-right",
    "first-loss-in-the-hundreds": "weights-too-big",
    "flat-at-two-point-three": "weights-too-small",
    "early-layers-never-move": "silent-layer",
    "spikes-on-a-schedule": "corrupt-batch",
    "jumps-after-a-tweak": "steps-too-large",
    "is-this-wobble-a-problem": "ordinary-wobble",
    "accuracy-stuck-at-95": "rare-class-swamped",
    "falling-loss-zero-score": "all-or-nothing-score",
    "a-perfectly-flat-run": "zero-step-size",
    "every-curve-flat": "all-rates-too-small",
    "every-curve-blows-up": "all-rates-too-large",
    "one-flat-one-gone": "rates-too-far-apart",
    "nan-after-forty-steps": "masked-division-backward",
    "confident-then-nan": "log-of-softmax",
    "nan-on-one-batch": "empty-batch-division",
    "frozen-features": "backbone-not-optimized",
    "swapped-head": "optimizer-holds-old-head",
    "memorised-batch": "nothing-wrong",
    "stuck-at-one-point-four": "labels-reshuffled",
    "regression-plateau": "shape-mismatch",
    "noisy-floor": "noise-left-on",
    "validation-as-good-as-training": "validation-copied-into-training",
    "validation-turns-back-up": "too-few-examples",
    "a-small-steady-gap": "nothing-wrong",
    "wobbling-flat-loss": "step-never-called",
    "stuck-at-three-quarters": "loss-from-argmax",
    "learns-then-lurches": "gradients-never-cleared",
    "better-on-unseen-data": "nothing-wrong",
    "validation-far-below": "easier-validation-split",
    "restless-validation": "validation-with-dropout-on",
}


def upgrade() -> None:
    with op.batch_alter_table("case_attempt", schema=None) as batch_op:
        batch_op.add_column(sa.Column("cause", TEXT(length=64), nullable=True))
    case_attempt = sa.table("case_attempt", sa.column("case_key"), sa.column("cause"))
    for case_key, cause in CAUSE_BEFORE_DRAWS.items():
        op.execute(
            case_attempt.update().where(case_attempt.c.case_key == case_key).values(cause=cause)
        )
    # A case key no pool ever had cannot be opened or scored; its attempts keep an empty cause
    # rather than blocking the upgrade.
    op.execute(case_attempt.update().where(case_attempt.c.cause.is_(None)).values(cause=""))
    with op.batch_alter_table("case_attempt", schema=None) as batch_op:
        batch_op.alter_column("cause", existing_type=TEXT(length=64), nullable=False)


def downgrade() -> None:
    with op.batch_alter_table("case_attempt", schema=None) as batch_op:
        batch_op.drop_column("cause")
