"""Runs inside the sandbox with the learner's file: calls both of the learner's versions on one
hidden batch (the padding run twice: holding zeros and holding inf and NaN), hands the learner's
compare() the judge's own loop and the run's planted version, and sends back, as tensors, what
each version returned, what compare() said and the first input it gave a wrong version that
shows the fault (the judge checks that input again outside). In the first run it also counts the
lines of the learner's file each version runs on a small batch and on a large one."""

from __future__ import annotations

import sys
from collections.abc import Callable
from types import FrameType, ModuleType
from typing import Any

import torch

from drills.catalog.variable_length_loss.exercises.write_it_twice.problem import (
    PLANTED,
    Planted,
    Version,
    build,
    by_rows,
    differs,
    valid_input,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report

FILENAME = "exercise.py"  # the name drills/exercises/inside.py compiles the learner's file under
SIZES = ((2, 4), (16, 32))  # (rows, positions) of the batches the lines are counted on
MAX_SHOWN = 1 << 16  # elements of an input kept as the one that shows a fault
# What compare() did: returned True / False, raised, returned something else.
TRUE, FALSE, RAISED, OTHER = 1, 0, -1, -2


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    batch = build(case, seed)
    tensors: dict[str, torch.Tensor] = {}
    for name, function in (("loop", "masked_means_loop"), ("vectorised", "masked_means")):
        version = getattr(learner, function)
        tensors |= outputs(name, function, version(batch.losses.clone(), batch.mask.clone()))
        if batch.garbage is not None:
            returned = version(batch.garbage.clone(), batch.mask.clone())
            tensors |= outputs(f"{name}:garbage", function, returned)
    tensors |= probe(learner.compare, PLANTED[case])
    if case == 0:
        tensors["lines"] = torch.tensor(lines_run(learner, seed), dtype=torch.int64)
    # No model here: the weights blob is empty, and the returned values are all there is to judge.
    return CaseOutput(weights={}, tensors=tensors)


def outputs(name: str, function: str, returned: object) -> dict[str, torch.Tensor]:
    """(per_sequence, overall) as tensors; ContractError (in the learner's terms) when the
    returned value is not in the documented format. Dtype and values are the checks' to judge."""
    if not isinstance(returned, tuple | list) or len(returned) != 2:
        raise ContractError(
            f"{function}() returned {type(returned).__name__}; it must return a pair of tensors "
            "(per_sequence, overall)"
        )
    per_sequence, overall = returned
    for part, value in (("per_sequence", per_sequence), ("overall", overall)):
        if not isinstance(value, torch.Tensor) or not value.is_floating_point():
            kind = value.dtype if isinstance(value, torch.Tensor) else type(value).__name__
            raise ContractError(f"{function}() returned {part} as {kind}; use a float tensor")
    if per_sequence.dim() != 1:
        raise ContractError(
            f"{function}() returned per_sequence of shape {list(per_sequence.shape)}; it must "
            "have one value per row, shape [B]"
        )
    if overall.numel() != 1:
        raise ContractError(
            f"{function}() returned overall of shape {list(overall.shape)}; it must be one "
            "value (a 0-dim tensor)"
        )
    return {
        f"{name}:per_sequence": per_sequence.detach().clone(),
        f"{name}:overall": overall.detach().reshape(()).clone(),
    }


def probe(compare: Callable[..., object], planted: Planted) -> dict[str, torch.Tensor]:
    """compare(loop, version) with the judge's loop and the planted version. Both work only while
    compare() runs: kept for later, they refuse."""
    active = True
    shown: list[torch.Tensor] = []

    def guarded(version: Version, watch: bool) -> Version:
        def run(losses: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            if not active:
                raise RuntimeError("the judge's versions work only while compare() runs")
            result = version(losses, mask)
            if watch and not shown and valid_input(losses, mask) and losses.numel() <= MAX_SHOWN:
                if differs(losses.detach(), mask, version):
                    shown.extend((losses.detach().clone(), mask.clone()))
            return result

        return run

    text = ""
    try:
        said = compare(guarded(by_rows, False), guarded(planted.version, not planted.right))
    except Exception as exc:  # the learner's compare failed: the checks say so, as a finding
        outcome, text = RAISED, f"{type(exc).__name__}: {exc}"
    else:
        if isinstance(said, torch.Tensor) and said.dtype == torch.bool and said.numel() == 1:
            said = bool(said)
        if isinstance(said, bool):
            outcome = TRUE if said else FALSE
        else:
            outcome, text = OTHER, type(said).__name__
    finally:
        active = False
    tensors = {"compare": torch.tensor([outcome], dtype=torch.int64)}
    if text:
        tensors["compare:text"] = torch.tensor(list(text.encode()[:300]), dtype=torch.uint8)
    if shown:
        tensors["shown:losses"], tensors["shown:mask"] = shown
    return tensors


def lines_run(learner: ModuleType, seed: int) -> list[int]:
    """Lines of the learner's file each version runs on a small batch and on a large one: the
    loop's grow with the batch, the vectorised version's do not. [loop small, loop large,
    vectorised small, vectorised large]."""
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for rows, width in SIZES:
        losses = torch.rand(rows, width, generator=generator) * 6
        mask = torch.arange(width) < torch.randint(1, width + 1, (rows, 1), generator=generator)
        mask[0] = False  # the same branches on both: one empty row, the others padded
        batches.append((losses, mask))
    return [
        executed_lines(getattr(learner, function), losses, mask)
        for function in ("masked_means_loop", "masked_means")
        for losses, mask in batches
    ]


def executed_lines(
    function: Callable[..., object], losses: torch.Tensor, mask: torch.Tensor
) -> int:
    count = 0

    def local(frame: FrameType, event: str, arg: Any) -> Any:
        nonlocal count
        count += event == "line"
        return local

    def tracer(frame: FrameType, event: str, arg: Any) -> Any:
        return local if frame.f_code.co_filename == FILENAME else None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        function(losses, mask)
    finally:
        sys.settrace(previous)
    return count
