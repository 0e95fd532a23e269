"""Runs outside the sandbox: each hidden run's batch rebuilt here from its seed, and the report
the learner's function sent back compared with the truth, which is known here because this
code chose how the labels were built (the drill's label mode) and which rows have no target.

No drill signature: the signature of "Double-shifted labels" describes a training run, and an
audit of one batch has none, so the judgement carries no verdict.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.double_shift_labels.exercises.label_audit.problem import LabelBatch, build
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
)
from drills.kit.causal_lm import IGNORE, label_shift

SAID = {
    None: "without a shift (None)",
    0: "not shifted (shift 0)",
    1: "shifted once (shift 1)",
    2: "shifted twice (shift 2)",
}
IS = {
    None: "no label counts, so there is nothing to line up (None)",
    0: "each counted label is the token at its own position (shift 0)",
    1: "each counted label is the next token (shift 1)",
    2: "each counted label is the token two positions ahead (shift 2)",
}


@dataclass(frozen=True)
class LabelReport:
    shift: int | None
    padding_masked: bool
    prompt_masked: bool
    empty_rows: list[int]


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {}  # no model: the harness sends an empty weights blob


def truth_of(batch: LabelBatch) -> LabelReport:
    """What the report must say, from how the labels were built. Kept here, not in problem.py:
    the sandbox masks this file."""
    counted = batch.targets != IGNORE
    empty = [row for row, any_counted in enumerate(counted.any(dim=1).tolist()) if not any_counted]
    return LabelReport(
        shift=label_shift(batch.mode) if bool(counted.any()) else None,
        padding_masked=batch.mode != "pad-in-loss",
        prompt_masked=batch.mode != "prompt-in-loss",
        empty_rows=empty,
    )


def learner_report(case: CaseEvidence, rows: int) -> LabelReport | None:
    values = case.values or {}
    summary, empty = values.get("report"), values.get("empty_rows")
    if summary is None or empty is None:
        return None
    if summary.dtype != torch.int64 or tuple(summary.shape) != (3,):
        return None
    if empty.dtype != torch.bool or tuple(empty.shape) != (rows,):
        return None
    shift, padding, prompt = summary.tolist()
    if shift not in (-1, 0, 1, 2) or padding not in (0, 1) or prompt not in (0, 1):
        return None
    return LabelReport(
        None if shift == -1 else shift,
        padding == 1,
        prompt == 1,
        [row for row, named in enumerate(empty.tolist()) if named],
    )


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    found: dict[str, list[str]] = {"report": [], "shift": [], "padding": [], "prompt": []}
    found["empty-rows"] = []
    measurements: dict[str, float | int | bool | str | None] = {}
    for case in cases:
        if case.error:
            continue
        batch = build(case.case, case.seed)
        truth = truth_of(batch)
        measurements[f"labels that count ({case.label})"] = int((batch.targets != IGNORE).sum())
        said = learner_report(case, batch.input_ids.shape[0])
        where = f"in case '{case.label}'"
        if said is None:
            for key in found:
                found[key].append(f"{where} no readable report came back")
            continue
        for key, text in compare(batch, truth, said):
            found[key].append(f"{where} {text}")

    passed = {
        "report": f"Your function returned a readable report for all {len(cases)} hidden batches.",
        "shift": "You told every way of lining up the labels apart.",
        "padding": "You said rightly, every time, whether padding counts as a target.",
        "prompt": "You said rightly, every time, whether the prompt counts as a target.",
        "empty-rows": "You named exactly the rows left with nothing to learn, every time.",
    }
    errored = [case for case in cases if case.error]
    checks = [
        missing_evidence(exercise, key, errored, shown=1)
        if errored
        else findings_check(exercise, key, found[key], text)
        for key, text in passed.items()
    ]
    return Assessment(checks, measurements)


def compare(batch: LabelBatch, truth: LabelReport, said: LabelReport) -> list[tuple[str, str]]:
    wrong = []
    if said.shift != truth.shift:
        text = f"your audit said the labels are {SAID[said.shift]}; {IS[truth.shift]}"
        wrong.append(("shift", text))
    for key, part, mask, said_masked, masked in (
        (
            "padding",
            "padding",
            batch.attention_mask == 0,
            said.padding_masked,
            truth.padding_masked,
        ),
        ("prompt", "the prompt", batch.prompt_mask, said.prompt_masked, truth.prompt_masked),
    ):
        if said_masked == masked:
            continue
        token = part.removeprefix("the ")
        if masked:
            text = (
                f"your audit said {token} tokens count as targets; none does (every label that "
                f"would be a {token} token is {IGNORE})"
            )
        else:
            counted = labels_from(batch, mask, truth.shift or 0)
            text = (
                f"your audit said {part} is masked; {counted} labels that count are {token} tokens"
            )
        wrong.append((key, text))
    if said.empty_rows != truth.empty_rows:
        wrong.append(("empty-rows", rows_text(batch, truth.empty_rows, said.empty_rows)))
    return wrong


def rows_text(batch: LabelBatch, truth: list[int], said: list[int]) -> str:
    missed = [row for row in truth if row not in said]
    extra = [row for row in said if row not in truth]
    counts = (batch.targets != IGNORE).sum(dim=1).tolist()
    named = f"row {said[0]}" if len(said) == 1 else f"rows {said}" if said else "no row"
    if missed:
        return (
            f"your audit named {named} as having no target; row {missed[0]} has none "
            f"(all {batch.targets.shape[1]} of its labels are {IGNORE})"
        )
    return (
        f"your audit named {named} as having no target; row {extra[0]} has "
        f"{counts[extra[0]]} labels that count"
    )


def labels_from(batch: LabelBatch, mask: torch.Tensor, shift: int) -> int:
    """How many counted labels take their token from a position in `mask` (t + shift)."""
    length = mask.shape[1]
    source = torch.zeros_like(mask)
    source[:, : length - shift] = mask[:, shift:]
    return int(((batch.targets != IGNORE) & source).sum())
