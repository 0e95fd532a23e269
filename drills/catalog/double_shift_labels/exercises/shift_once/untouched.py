"""Runs outside the sandbox: whether prepare_labels() left the batches it was handed as they were.

The harness hands it copies of the hidden probes and sends them back as the function left them;
here they are compared with the probes rebuilt from the seed. A function that writes into its
inputs (labels = input_ids, then -100 written into the labels) changes the batch the pipeline
feeds the model next, though its labels are right.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from drills.catalog.double_shift_labels.exercises.shift_once.problem import LabelBatch, show_token
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import CaseEvidence, missing_evidence, result

HANDED = ("input_ids", "attention_mask", "response_mask")  # handed-<i>'s three rows, in order


def batch_changes(case: CaseEvidence, probes: list[LabelBatch]) -> list[str]:
    """How prepare_labels() left each probe it was handed, against the probe rebuilt here: one
    sentence for each probe it changed."""
    if case.error:
        return []
    found = []
    for i, batch in enumerate(probes):
        handed = (case.values or {}).get(f"handed-{i}")
        before = batch.stacked()
        if handed is None or handed.shape != before.shape or handed.dtype != before.dtype:
            return ["the batches your function was handed did not come back"]
        changed = [
            (name, int((handed[row] != before[row]).sum()))
            for row, name in enumerate(HANDED)
            if not torch.equal(handed[row], before[row])
        ]
        if changed:
            found.append(changed_text(batch, handed, changed))
    return found


def changed_text(batch: LabelBatch, handed: torch.Tensor, changed: list[tuple[str, int]]) -> str:
    size = f"{batch.input_ids.shape[0]}x{batch.input_ids.shape[1]}"
    parts = ", ".join(f"{count} positions of {name}" for name, count in changed)
    text = f"in a hidden batch of {size} tokens, prepare_labels changed {parts} in place"
    if changed[0][0] == "input_ids":
        b, t = (int(i) for i in (handed[0] != batch.input_ids).nonzero()[0])
        value = int(handed[0, b, t])
        text += (
            f" (first: sequence {b}, position {t}, input {show_token(int(batch.input_ids[b, t]))} "
            f"became {value}), so the model would be fed {value} there as its input. "
            "labels = input_ids makes no copy: the two names are one tensor, and writing into "
            "the labels writes into the batch; build the labels on input_ids.clone()"
        )
    else:
        text += "; the pipeline uses the batch again after your function returns"
    return text


def untouched_check(
    exercise: Exercise, cases: Sequence[CaseEvidence], found: list[str]
) -> CheckResult:
    key = "batch-untouched"
    if any(case.error for case in cases):
        return missing_evidence(exercise, key, [c for c in cases if c.error])
    if found:
        return result(exercise, key, "fail", found[0][0].upper() + found[0][1:] + ".")
    return result(
        exercise, key, "pass", "Your function left every hidden batch it was handed as it was."
    )
