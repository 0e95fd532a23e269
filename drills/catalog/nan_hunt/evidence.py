"""What the NaN hunt shows besides its curves: the finding table and the decoded inputs."""

from __future__ import annotations

import hashlib
import struct
from typing import Any

import torch

from drills.catalog.nan_hunt.setup import Batch, NanHuntConfig
from drills.kit.nonfinite import STAGES, Finding
from drills.kit.tables import table

STAGE_CHECKS = {
    "data": "the batch's input features",
    "activation": "every module's output, in the order the forward pass finishes them",
    "loss": "the loss value",
    "gradient": "every parameter's gradient, closest to the loss first",
    "parameter": "every parameter after the optimizer step",
}


def finding_table(finding: Finding | None, steps: int) -> dict[str, Any]:
    rows = []
    for stage in STAGES:
        if finding is None:
            result = f"finite on all {steps} steps"
        elif STAGES.index(stage) < STAGES.index(finding.stage):
            result = f"finite up to and including step {finding.step}"
        elif stage == finding.stage:
            result = (
                f"FIRST NON-FINITE at step {finding.step}: '{finding.name}', "
                f"{finding.count} of {finding.numel} elements {finding.kind}"
            )
        elif finding.step == 0:
            result = "not checked: training stopped at step 0"
        else:
            result = f"finite up to step {finding.step - 1}; not checked at step {finding.step}"
        rows.append([stage, STAGE_CHECKS[stage], result])
    note = (
        "No tensor went non-finite: the run finished."
        if finding is None
        else f"Training stopped at the first finding: {finding.describe()}."
    )
    return table(
        "first-nonfinite",
        "First non-finite tensor",
        ["stage", "checked", "result"],
        rows,
        note=note,
    )


def batch_digest(batch: Batch) -> str:
    sha = hashlib.sha256()
    for values, fmt in ((batch.features, "f"), (batch.labels, "q"), (batch.mask.long(), "q")):
        flat = values.flatten().tolist()
        sha.update(struct.pack(f"<{len(flat)}{fmt}", *flat))
    return sha.hexdigest()


def describe_batch(batch: Batch) -> dict[str, Any]:
    lengths = batch.mask.sum(dim=-1).tolist()
    nan_at = torch.isnan(batch.features).nonzero().tolist()
    return {
        "sha256": batch_digest(batch),
        "lengths": lengths,
        "real_tokens": int(batch.mask.sum()),
        "nan_at": nan_at,  # [sequence, token, feature] of each NaN
        "first_labels": batch.labels[0, : lengths[0]].tolist() if lengths[0] else [],
    }


def describe_inputs(config: NanHuntConfig, batches: dict[int, Batch]) -> dict[str, Any]:
    return {
        "shapes": {
            "features": [config.sequences, config.length, config.features],
            "labels": [config.sequences, config.length],
            "mask": [config.sequences, config.length],
        },
        "stream": (
            f"a fresh seeded batch every step; labels come from a fixed linear teacher; the batch "
            f"at step {config.unusual_step} holds an empty sequence"
        ),
        "batches": {str(step): describe_batch(batch) for step, batch in sorted(batches.items())},
    }
