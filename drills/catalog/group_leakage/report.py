"""The evidence tables and input description of a "Group and near-copy leakage" run."""

from __future__ import annotations

from typing import Any

from drills.catalog.group_leakage.audit import NEAR_COPY_DISTANCE
from drills.catalog.group_leakage.problem import Rows
from drills.catalog.group_leakage.signature import GroupLeakageSignature
from drills.kit.tables import table


def audit_table(signature: GroupLeakageSignature) -> dict[str, Any]:
    return table(
        "split_audit",
        "The split, audited three ways",
        ("audit", "validation rows it flags", "share of validation"),
        (
            _audit_row("exact match of the features", signature.exact_matches, signature),
            _audit_row("user also in training", signature.shared_user_rows, signature),
            (
                f"a training row closer than {NEAR_COPY_DISTANCE:g}",
                signature.near_copies_found,
                signature.copy_share_found,
            ),
        ),
        note=f"{signature.val_rows} validation rows, {signature.train_rows} training rows"
        + (
            f"; deduplication dropped {signature.removed_by_dedupe} validation rows"
            if signature.removed_by_dedupe
            else ""
        )
        + ".",
    )


def _audit_row(
    name: str, count: int | None, signature: GroupLeakageSignature
) -> tuple[str, int | None, float | None]:
    share = count / signature.val_rows if count is not None and signature.val_rows else None
    return (name, count, share)


def loss_table(signature: GroupLeakageSignature) -> dict[str, Any]:
    return table(
        "losses",
        "Where each loss sits, against the floors",
        ("rows", "loss", "best possible"),
        (
            ("training", signature.final_train_loss, None),
            ("validation", signature.final_val_loss, None),
            ("validation rows an audit flags", signature.flagged_val_loss, None),
            ("validation rows no audit flags", signature.unflagged_val_loss, None),
            ("new reviews of users in training", signature.known_user_loss, signature.known_floor),
            ("users never seen", signature.unseen_loss, signature.unseen_floor),
        ),
        note="Mean squared error on a target of variance 1. The floors are the noise, and the "
        "noise plus the users' own offsets, which no model can learn for a user it never saw.",
    )


def describe_inputs(train: Rows, val: Rows, unseen: Rows, digest: str) -> dict[str, Any]:
    return {
        "shapes": {
            "train_features": list(train.features.shape),
            "val_features": list(val.features.shape),
            "unseen_features": list(unseen.features.shape),
        },
        "sha256": digest,
        "examples": [
            {
                "user": int(val.users[i]),
                "content_first2": [round(v, 3) for v in val.features[i, :2].tolist()],
                "style_first2": [round(v, 3) for v in val.features[i, 4:6].tolist()],
                "target": round(float(val.targets[i]), 3),
            }
            for i in range(min(3, len(val)))
        ],
        "note": "features: 4 of content, then 16 of the writer's style",
    }
