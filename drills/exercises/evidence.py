"""What the judge holds about one hidden run once the sandbox is done, and the measuring helpers
every exercise's checks share. Runs outside the sandbox, in a process that runs no learner code.

An exercise's `checks.py` module provides:

    reference_weights(case, seed) -> dict[str, Tensor]
        the model's initial state dict for that hidden run, rebuilt from the seed with trusted
        code: the layout (names, shapes, dtypes) the trained weights must come back in, and the
        starting point their movement is measured from;
    assess(exercise, cases) -> Assessment
        every check, decided from measurements on `cases` (a list of CaseEvidence).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import torch

from drills.core.contract import Signature, SignatureValue
from drills.exercises.contract import CheckResult, CheckStatus, Exercise
from drills.exercises.transport import Frames

# A parameter "moved" when it changed by at least this share of its initial size (Adam's first
# steps alone move a weight by about lr per entry: far more than this on every model here).
MOVED_AT_LEAST = 1e-3


@dataclass
class CaseEvidence:
    case: int
    label: str  # "5 examples", "run A"
    seed: int  # the hidden seed
    initial: dict[str, torch.Tensor]  # rebuilt outside from the seed
    weights: dict[str, torch.Tensor] | None  # what came back, if it has the initial's layout
    weights_problem: str | None  # why `weights` is None
    values: dict[str, torch.Tensor] | None  # other tensors the harness sent (not yet checked)
    frames: Frames  # the run's validated frames (untrusted: never decide a check on them alone)
    error: str | None = None  # the learner's code failed in this run (from the sandbox)

    def unusable(self) -> str:
        """Why this run cannot be measured, in words."""
        if self.error:
            return f"{self.label}: your code did not finish ({first_line(self.error)})"
        return f"{self.label}: no usable trained weights came back ({self.weights_problem})"


@dataclass
class Assessment:
    checks: list[CheckResult]
    measurements: dict[str, SignatureValue] = field(default_factory=dict)
    signature: Signature | None = None  # the drill's signature, from trusted measurements only


def first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip() if lines else text


def result(exercise: Exercise, key: str, status: CheckStatus, message: str) -> CheckResult:
    return CheckResult(key, exercise.check_title(key), status, message)


def missing_evidence(
    exercise: Exercise, key: str, cases: Iterable[CaseEvidence], *, shown: int | None = None
) -> CheckResult:
    """A check that could not be measured: "error" when the code crashed, else "fail".
    `shown`: describe only that many runs and count the rest (exercises with many runs)."""
    cases = list(cases)
    status: CheckStatus = "error" if any(case.error for case in cases) else "fail"
    text = "; ".join(case.unusable() for case in cases[:shown])
    if shown is not None and len(cases) > shown:
        text += f"; and {len(cases) - shown} more hidden runs like it"
    return result(exercise, key, status, text)


def weights_check(
    exercise: Exercise,
    cases: Sequence[CaseEvidence],
    key: str,
    *,
    what: str = "trained weights",
    shown: int | None = None,
) -> CheckResult:
    """Every hidden run sent back its model's weights: the right names, shapes and dtypes, and
    only finite numbers (read with safetensors, never unpickled). `what`: how the pass message
    names them (a write-it exercise's model is not trained); `shown`: as in missing_evidence."""
    bad = [case for case in cases if case.weights is None]
    if bad:
        return missing_evidence(exercise, key, bad, shown=shown)
    return result(exercise, key, "pass", f"The {what} of all {len(cases)} hidden runs came back.")


def findings_check(exercise: Exercise, key: str, found: list[str], passed: str) -> CheckResult:
    """A check that fails on the first of its findings (each a clause in the learner's terms),
    counting the others; `passed` when there are none."""
    if not found:
        return result(exercise, key, "pass", passed)
    text = found[0][0].upper() + found[0][1:] + "."
    if len(found) > 1:
        text += f" ({len(found) - 1} more like it.)"
    return result(exercise, key, "fail", text)


def relative_changes(
    trained: Mapping[str, torch.Tensor], initial: Mapping[str, torch.Tensor]
) -> dict[str, float]:
    """||trained - initial|| / ||initial|| per parameter (absolute change where initial is 0)."""
    changes = {}
    for name, start in initial.items():
        if not start.is_floating_point():
            continue
        delta = float((trained[name].double() - start.double()).norm())
        size = float(start.double().norm())
        changes[name] = delta / size if size > 0 else delta
    return changes


def total_change(trained: Mapping[str, torch.Tensor], initial: Mapping[str, torch.Tensor]) -> float:
    """How far the whole model moved: ||trained - initial|| / ||initial|| over all parameters."""
    delta = sum(float((trained[n].double() - t.double()).pow(2).sum()) for n, t in initial.items())
    size = sum(float(t.double().pow(2).sum()) for t in initial.values())
    return math.sqrt(delta / size) if size > 0 else math.sqrt(delta)


def still(changes: Mapping[str, float], names: Iterable[str]) -> list[str]:
    """The parameters among `names` that did not move."""
    return [name for name in names if changes.get(name, 0.0) < MOVED_AT_LEAST]


def listed(names: Sequence[str], shown: int = 4) -> str:
    text = ", ".join(names[:shown])
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")


def nats(value: float) -> str:
    if value == 0:
        return "0 nats"
    return f"{value:.3g} nats" if abs(value) >= 1e-3 else f"{value:.1e} nats"
