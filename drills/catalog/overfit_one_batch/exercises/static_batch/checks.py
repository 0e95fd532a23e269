"""Runs outside the sandbox. Loader runs: the learner's verdict against the truth, measured
here by rebuilding the hidden loader from its seed and comparing two of its passes bit for bit.
Seeded runs: the learner's function was called three times (the same seed twice, then another);
the losses are computed here from the logits the judge's own networks recorded, and the runs
compared bit for bit: the batch, every step's loss and the final weights. The values the
learner's code returned are never read.

TRAINS_BELOW: the trained weights' loss on the batch, over the initial weights' (eval mode).
The reference and two other right files end at 0.15-0.41 of it over seeds 0-4 (20 steps of
Adam at 1e-2, with dropout); a run that hardly trains stays near 1.

No drill signature: a repeatability check of a 20-step run is not the drill's overfit run.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from drills.catalog.overfit_one_batch.exercises.static_batch.problem import (
    LOADERS,
    SmallNet,
    loader_truth,
    net_from,
)
from drills.exercises.contract import Exercise
from drills.exercises.evidence import Assessment, CaseEvidence, findings_check, missing_evidence

TRAINS_BELOW = 0.7
LOADER_CHECKS = ("accepts-static", "detects-change")
SEEDED_CHECKS = ("same-batch", "same-losses", "seed-matters", "fresh-randomness", "one-batch")
CHECKS = (*LOADER_CHECKS, *SEEDED_CHECKS, "trains")

CHANGE = {
    "shuffling": "the second pass gave the same examples in another order",
    "augmenting": "the second pass gave the features with fresh noise added",
    "in-place": "the loader handed back the same tensor object both times, its values changed "
    "in place after the first pass",
    "labels-apart": "the features were the same, but the labels came in another order",
}


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {}  # no model comes back as "the" weights: the seeded runs send theirs as values


class Run:
    """One call of seeded_overfit, as the judge's loader and network recorded it."""

    def __init__(self, values: dict[str, torch.Tensor], run: str) -> None:
        self.features = values[f"{run}:features"]
        self.labels = values[f"{run}:labels"]
        self.inputs = values[f"{run}:inputs"]
        self.logits = values[f"{run}:logits"]
        self.masks = values[f"{run}:masks"]
        layout = SmallNet().state_dict()
        self.initial = {name: values[f"{run}:initial:{name}"] for name in layout}
        self.final = {name: values[f"{run}:final:{name}"] for name in layout}
        for name, tensor in layout.items():
            for weights in (self.initial, self.final):
                if weights[name].shape != tensor.shape or weights[name].dtype != tensor.dtype:
                    raise ValueError(f"{name} came back in another layout")
        if self.logits.shape[:2] != (len(self.inputs), len(self.labels)):
            raise ValueError("the logits do not match the batch")

    def losses(self) -> torch.Tensor:
        """Each recorded step's loss, computed here from its logits and the batch's labels."""
        return torch.stack([F.cross_entropy(logits, self.labels) for logits in self.logits])

    @torch.no_grad()
    def loss_at(self, weights: dict[str, torch.Tensor]) -> float:
        return float(F.cross_entropy(net_from(weights)(self.features), self.labels))


def runs_of(case: CaseEvidence) -> dict[str, Run] | None:
    try:
        return {run: Run(case.values or {}, run) for run in ("a", "b", "c")}
    except (KeyError, ValueError):
        return None


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    found: dict[str, list[str]] = {key: [] for key in CHECKS}
    measurements: dict[str, float | int | bool | str | None] = {}
    for case in cases:
        if case.error:
            continue
        if case.case < len(LOADERS):
            judge_loader(case, found)
        else:
            judge_seeded(case, found, measurements)
    loader_cases = [case for case in cases if case.case < len(LOADERS)]
    seeded_cases = [case for case in cases if case.case >= len(LOADERS)]
    titles = {
        "accepts-static": "It calls every static loader static, new tensor objects or not.",
        "detects-change": "It catches every loader whose batch changes between passes.",
        "same-batch": "The two runs with the same seed took the same batch, bit for bit.",
        "same-losses": "The two runs with the same seed had the same loss at every step and "
        "ended on the same weights, bit for bit.",
        "seed-matters": "A run with another seed took another batch or started elsewhere.",
        "fresh-randomness": "Dropout drew a new mask at every step of a run.",
        "one-batch": "Every step of a run trained on the one batch it took.",
        "trains": f"The trained weights' loss is under {TRAINS_BELOW:g} of the initial one.",
    }
    checks = []
    for key, passed in titles.items():
        errored = [c for c in (loader_cases if key in LOADER_CHECKS else seeded_cases) if c.error]
        if errored:
            checks.append(missing_evidence(exercise, key, errored, shown=1))
        else:
            checks.append(findings_check(exercise, key, found[key], passed))
    return Assessment(checks, measurements)


def judge_loader(case: CaseEvidence, found: dict[str, list[str]]) -> None:
    kind = LOADERS[case.case]
    truth = loader_truth(kind, case.seed)
    said = (case.values or {}).get("static")
    key = "accepts-static" if truth else "detects-change"
    if said is None or said.dtype != torch.bool or said.numel() != 1:
        found[key].append(f"in case '{case.label}' no readable verdict came back")
    elif bool(said.item()) != truth:
        if truth:
            copies = " (new tensor objects, equal values)" if kind == "equal-copies" else ""
            found[key].append(
                f"in case '{case.label}' your check said the batch changed between two passes; "
                f"it did not: every tensor was equal bit for bit{copies}"
            )
        else:
            found[key].append(
                f"in case '{case.label}' your check said the batch is the same on two passes; "
                f"it is not: {CHANGE[kind]}"
            )


def judge_seeded(
    case: CaseEvidence,
    found: dict[str, list[str]],
    measurements: dict[str, float | int | bool | str | None],
) -> None:
    where = f"in case '{case.label}'"
    runs = runs_of(case)
    if runs is None:
        for key in (*SEEDED_CHECKS, "trains"):
            found[key].append(f"{where} no readable record of the three runs came back")
        return
    a, b, c = runs["a"], runs["b"], runs["c"]
    if not (equal(a.features, b.features) and equal(a.labels, b.labels)):
        found["same-batch"].append(
            f"{where} the two runs with the same seed took different batches from the loader"
        )
    problem = loss_difference(a, b)
    if problem:
        found["same-losses"].append(f"{where} {problem}")
    if equal(a.features, c.features) and same_weights(a.initial, c.initial):
        found["seed-matters"].append(
            f"{where} a run with another seed took the same batch and started from the same "
            "weights: the seed you are given does not decide the run"
        )
    repeats = [t for t in range(1, len(a.masks)) if equal(a.masks[t], a.masks[t - 1])]
    measurements[f"steps with the last step's dropout mask ({case.label})"] = len(repeats)
    if repeats:
        found["fresh-randomness"].append(
            f"{where} dropout drew at step {repeats[0]} the very mask it drew at the step "
            f"before ({len(repeats)} of {len(a.masks) - 1} steps did): the run's randomness is "
            "frozen, not made repeatable"
        )
    moved = [t for t in range(len(a.inputs)) if not equal(a.inputs[t], a.features)]
    if moved:
        found["one-batch"].append(
            f"{where} the input of step {moved[0]} was not the batch the run took first from "
            f"the loader ({len(moved)} of {len(a.inputs)} steps)"
        )
    start, end = a.loss_at(a.initial), a.loss_at(a.final)
    measurements[f"loss at the start ({case.label})"] = start
    measurements[f"loss at the end ({case.label})"] = end
    if not end < TRAINS_BELOW * start:
        found["trains"].append(
            f"{where} the loss of the trained weights on the batch is {end:.3g}, against "
            f"{start:.3g} at the start; 20 steps of Adam at 1e-2 bring it under "
            f"{TRAINS_BELOW:g} of that"
        )


def loss_difference(a: Run, b: Run) -> str | None:
    """How two runs with the same seed differ, step by step; None when they do not."""
    first, second = a.losses(), b.losses()
    if len(first) != len(second):
        return f"the two runs with the same seed ran {len(first)} and {len(second)} steps"
    for step, (x, y) in enumerate(zip(first.tolist(), second.tolist(), strict=True)):
        if x != y:
            return (
                f"the two runs with the same seed had different losses from step {step} on "
                f"({x:.6g} and {y:.6g})"
            )
    if not same_weights(a.final, b.final):
        return "the two runs with the same seed had the same losses but ended on other weights"
    return None


def equal(x: torch.Tensor, y: torch.Tensor) -> bool:
    return x.shape == y.shape and x.dtype == y.dtype and bool(torch.equal(x, y))


def same_weights(x: dict[str, torch.Tensor], y: dict[str, torch.Tensor]) -> bool:
    return all(equal(x[name], y[name]) for name in x)
