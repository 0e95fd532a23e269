"""Runs outside the sandbox: each hidden batch rebuilt here from its seed, both of the learner's
versions against the definitions computed here in float64, the padding run against itself, the
lines each version ran, and compare()'s answers against the version each run planted. A False
for a wrong version counts only with an input that shows the fault, checked here again.

The line counts come from a trace inside the sandbox, where the learner's code runs, as every
value judged here does: a file can hide a loop from them only by tampering with the tracer on
purpose. They tell a loop from a vectorised version; they do not measure speed.

No drill signature: the signature of "Variable-length losses" describes a training run, and two
versions of one reduction have none, so the judgement carries no verdict.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import torch

from drills.catalog.variable_length_loss.exercises.write_it_twice.harness import (
    FALSE,
    RAISED,
    SIZES,
    TRUE,
)
from drills.catalog.variable_length_loss.exercises.write_it_twice.problem import (
    PLANTED,
    Batch,
    build,
    differs,
    reference,
    valid_input,
)
from drills.core.contract import SignatureValue
from drills.exercises.contract import Exercise
from drills.exercises.evidence import Assessment, CaseEvidence, findings_check, missing_evidence

RELATIVE, ABSOLUTE = 1e-5, 1e-6  # a mean of at most 32 float32 losses: its rounding, no more
PRECISE = 1e-10  # relative, on float64 losses: float32 arithmetic is 1e-8 off or worse
FUNCTIONS = {"loop": "masked_means_loop", "vectorised": "masked_means"}
VALUE_KEYS = ("per-sequence", "empty-rows", "overall", "padding-ignored", "dtype")
KEYS = (*VALUE_KEYS, "written-twice", "compare-accepts", "compare-catches")
Means = tuple[torch.Tensor, torch.Tensor]


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {}  # no model: the harness sends an empty weights blob


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    found: dict[str, list[str]] = {key: [] for key in KEYS}
    measurements: dict[str, SignatureValue] = {}
    for case in cases:
        if case.error:
            continue
        batch, values = build(case.case, case.seed), case.values or {}
        where = f"in case '{case.label}'"
        measurements[f"real tokens ({case.label})"] = int(batch.mask.sum())
        for name, function in FUNCTIONS.items():
            came = returned(values, name)
            if came is None:
                for key in VALUE_KEYS:
                    found[key].append(f"{where} nothing readable came back from {function}()")
                continue
            for key, text in judged_values(batch, came, function):
                found[key].append(f"{where} {text}")
            if batch.garbage is not None:
                junk = returned(values, f"{name}:garbage")
                found["padding-ignored"].extend(
                    f"{where} {text}" for text in padding_kept(came, junk, function)
                )
        key, text = compare_finding(case.case, values)
        if text:
            found[key].append(f"{where} {text}")
        if case.case == 0:
            found["written-twice"].extend(f"{where} {text}" for text in loops(values, measurements))

    passed = {
        "per-sequence": "Both versions gave every row with a real token the mean of its losses.",
        "empty-rows": "Both versions gave 0 for every row with no real token, and for the "
        "batch with none.",
        "overall": "Both versions gave every batch its mean over all of its real tokens.",
        "padding-ignored": "Inf and NaN in the padding changed nothing in either version.",
        "dtype": "Both versions returned the losses' dtype, at float64's precision for float64.",
        "written-twice": "Your loop runs more of its lines on a larger batch; your vectorised "
        "version runs the same ones.",
        "compare-accepts": "Your compare accepted both correct versions, which differ from a "
        "plain loop by rounding.",
        "compare-catches": "Your compare caught every wrong version, each on an input that "
        "shows its fault.",
    }
    errored = [case for case in cases if case.error]
    checks = [
        missing_evidence(exercise, key, errored, shown=1)
        if errored
        else findings_check(exercise, key, found[key], text)
        for key, text in passed.items()
    ]
    return Assessment(checks, measurements)


def returned(values: Mapping[str, torch.Tensor], name: str) -> Means | None:
    per_sequence, overall = values.get(f"{name}:per_sequence"), values.get(f"{name}:overall")
    if per_sequence is None or overall is None or overall.dim() != 0 or per_sequence.dim() != 1:
        return None
    return per_sequence, overall


def judged_values(batch: Batch, came: Means, function: str) -> list[tuple[str, str]]:
    """(check key, what is wrong) for one version's answer on one batch."""
    per_sequence, overall = came
    rows, width = batch.mask.shape
    if per_sequence.shape[0] != rows:
        text = f"{function}() returned {per_sequence.shape[0]} per-sequence values for {rows} rows"
        return [("per-sequence", text)]
    dtype = batch.losses.dtype
    wrong = [
        ("dtype", f"{function}() returned {part} as {value.dtype} for {dtype} losses")
        for part, value in (("per_sequence", per_sequence), ("overall", overall))
        if value.dtype != dtype
    ]
    truth, total = reference(batch.losses, batch.mask)
    counts = batch.mask.sum(dim=1).tolist()
    padded = (batch.losses.double().where(batch.mask, 0.0).sum(dim=1) / width).tolist()
    imprecise = False
    for row, (value, right, count) in enumerate(
        zip(per_sequence.double().tolist(), truth.tolist(), counts, strict=True)
    ):
        if count == 0:
            if value != 0.0:
                text = f"{function}() gave row {row}, which has no real token, {value:.4g}"
                wrong.append(("empty-rows", text + "; it must give 0"))
        elif not close(value, right, RELATIVE):
            text = (
                f"{function}() gave row {row} ({count} real tokens of {width}) {value:.6g}, "
                "which is not the mean of its real losses"
            )
            if close(value, padded[row], RELATIVE):
                text += ": it is their sum over the padded length"
            else:
                text += off(value, right)
            wrong.append(("per-sequence", text))
        elif not close(value, right, PRECISE):
            imprecise = True
    value, right = float(overall), float(total)
    if sum(counts) == 0:
        if value != 0.0:
            text = f"{function}() gave the batch, which has no real token, an overall mean of "
            wrong.append(("empty-rows", text + f"{value:.4g}; it must give 0"))
    elif not close(value, right, RELATIVE):
        text = (
            f"{function}() gave an overall mean of {value:.6g}, which is not the mean over "
            "the batch's real tokens"
        )
        means = [mean for mean, count in zip(truth.tolist(), counts, strict=True) if count]
        if close(value, sum(means) / len(means), RELATIVE):
            text += ": it is the average of the rows' means, where each row weighs the same"
        else:
            text += off(value, right)
        wrong.append(("overall", text))
    elif not close(value, right, PRECISE):
        imprecise = True
    if imprecise and dtype == torch.float64 and not any(key == "dtype" for key, _ in wrong):
        text = (
            f"{function}() matches the means of float64 losses only to about float32's "
            f"precision (within {RELATIVE:g}, not {PRECISE:g}): compute in the losses' dtype"
        )
        wrong.append(("dtype", text))
    return wrong


def off(value: float, reference: float) -> str:
    """How a wrong value is wrong, without giving the right one away."""
    if math.isnan(value) or math.isinf(value):
        return f"; it is {value} where a number is due"
    return f"; it is too {'high' if value > reference else 'low'}"


def close(value: float, reference: float, relative: float) -> bool:
    """Within `relative` of the reference, and of 1 near 0 (NaN is never close)."""
    return abs(value - reference) <= relative * (1.0 + abs(reference))


def padding_kept(clean: Means, garbage: Means | None, function: str) -> list[str]:
    """What is wrong with one version's answer when the padding held inf and NaN."""
    if garbage is None:
        return [f"nothing readable came back from {function}() when the padding held inf and NaN"]
    for part, zeros, junk in zip(("per_sequence", "overall"), clean, garbage, strict=True):
        text = (
            f"{function}() gave another {part} when the padding held inf and NaN than when it "
            "held zeros"
        )
        if zeros.shape != junk.shape:
            return [f"{text} (of shape {list(junk.shape)}, not {list(zeros.shape)})"]
        moved = ~torch.isclose(junk.double(), zeros.double(), rtol=1e-6, atol=1e-7, equal_nan=True)
        if bool(moved.any()):
            index = int(moved.flatten().nonzero()[0])
            was, became = zeros.double().flatten()[index], junk.double().flatten()[index]
            where = f" at row {index}" if part == "per_sequence" else ""
            return [
                f"{text} ({float(became):.4g} instead of {float(was):.4g}{where}): what the "
                "padding holds must not reach the result"
            ]
    return []


def compare_finding(case: int, values: Mapping[str, torch.Tensor]) -> tuple[str, str]:
    """(check key, what is wrong, or "") for what compare() said of this run's planted version."""
    planted = PLANTED[case]
    key = "compare-accepts" if planted.right else "compare-catches"
    outcome = values.get("compare")
    if outcome is None or outcome.dtype != torch.int64 or outcome.numel() != 1:
        return key, f"nothing readable came back from compare() for {planted.what}"
    text = bytes(values.get("compare:text", torch.zeros(0, dtype=torch.uint8)).tolist())
    said = text.decode(errors="replace")
    result = int(outcome)
    if result == RAISED:
        ought = "True" if planted.right else "False"
        return key, f"your compare raised {said} for {planted.what}; it must return {ought}"
    if result not in (TRUE, FALSE):
        return key, f"your compare returned {said} for {planted.what}, not True or False"
    if planted.right:
        if result == TRUE:
            return key, ""
        return key, (
            f"your compare returned False for {planted.what}, which differs from a plain loop "
            "by rounding only"
        )
    if result == TRUE:
        return key, f"your compare returned True for {planted.what} ({planted.shows})"
    losses, mask = values.get("shown:losses"), values.get("shown:mask")
    if losses is not None and mask is not None and valid_input(losses, mask):
        if differs(losses, mask, planted.version):  # the fault, shown again here
            return key, ""
    return key, (
        f"your compare returned False for {planted.what}, but on no input it handed that "
        "version does it differ from a correct one"
    )


def loops(values: Mapping[str, torch.Tensor], measurements: dict[str, SignatureValue]) -> list[str]:
    """What is wrong with how the two versions are written, read from the lines they ran."""
    lines = values.get("lines")
    if lines is None or lines.dtype != torch.int64 or tuple(lines.shape) != (4,):
        return ["no readable count of the lines each version ran came back"]
    loop_small, loop_large, fast_small, fast_large = (int(n) for n in lines.tolist())
    small, large = (f"{rows} x {width}" for rows, width in SIZES)
    measurements[f"lines the loop ran ({small}, {large})"] = f"{loop_small}, {loop_large}"
    measurements[f"lines the vectorised version ran ({small}, {large})"] = (
        f"{fast_small}, {fast_large}"
    )
    found = []
    if loop_large < 2 * loop_small or loop_large == 0:
        found.append(
            f"masked_means_loop() ran {loop_small} lines of your file on a batch of {small} and "
            f"{loop_large} on one of {large}: a plain loop visits every row (or token), so it "
            "runs more lines on more of them"
        )
    if fast_large > 1.25 * fast_small + 2:
        found.append(
            f"masked_means() ran {fast_small} lines of your file on a batch of {small} and "
            f"{fast_large} on one of {large}: a vectorised version handles every row at once, "
            "with no Python loop over rows or tokens"
        )
    return found
