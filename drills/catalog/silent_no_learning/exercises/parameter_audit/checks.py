"""Runs outside the sandbox: the learner's audit rows against the truth, rebuilt here from each
hidden seed (the same model, optimizer and backward, then each parameter read directly), and
the weights and gradients that came back against the rebuilt ones.

No drill signature: the signature of "The loop runs, nothing learns" describes a training run,
and an audit of one backward has none, so the judgement carries no verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.silent_no_learning.exercises.parameter_audit.problem import (
    COLUMNS,
    FAULTS,
    STATES,
    Problem,
    build,
)
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    weights_check,
)

RELATIVE = 1e-4  # on a gradient norm: float32 rounding, nothing more
ABSOLUTE = 1e-7
FIELD_CHECKS = ("requires-grad", "in-optimizer", "grad-state", "grad-norm")
MEANING = {
    "none": ".grad is None",
    "zero": ".grad is a tensor of zeros",
    "finite": ".grad holds finite values, not all zero",
    "non-finite": ".grad holds NaN or inf",
}


@dataclass(frozen=True)
class Row:
    """The truth about one parameter after the backward, read here."""

    name: str
    requires_grad: bool
    group: int | None  # the param group that holds it (1-based), None when none does
    groups: int
    grad: str
    norm: float | None
    # What a wrong norm may be instead: description -> value.
    lookalikes: dict[str, float]


@dataclass(frozen=True)
class Said:
    """One row of the learner's audit, as it came back."""

    requires_grad: bool
    in_optimizer: bool
    grad: str
    norm: float | None


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {
        name: t.detach().clone() for name, t in build(FAULTS[case], seed).model.state_dict().items()
    }


def reference_rows(problem: Problem) -> list[Row]:
    groups = problem.optimizer.param_groups
    holder = {id(p): number for number, group in enumerate(groups, 1) for p in group["params"]}
    rows = []
    for name, parameter in problem.model.named_parameters():
        grad = parameter.grad
        lookalikes = {"the norm of the weight itself": float(parameter.detach().double().norm())}
        if grad is None:
            state, norm = "none", None
        elif not bool(torch.isfinite(grad).all()):
            state, norm = "non-finite", None
        else:
            values = grad.detach().double()
            norm = float(values.norm())
            state = "finite" if norm > 0 else "zero"
            lookalikes |= {
                "the squared norm (no square root)": norm**2,
                "the sum of absolute values (an L1 norm)": float(values.abs().sum()),
                "the largest absolute entry": float(values.abs().max()),
                "the mean of the entries": float(values.mean()),
            }
        held = holder.get(id(parameter))
        rows.append(Row(name, parameter.requires_grad, held, len(groups), state, norm, lookalikes))
    return rows


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights", what="weights", shown=1)]
    found: dict[str, list[str]] = {key: [] for key in ("rows", *FIELD_CHECKS, "leaves-model-alone")}
    measurements: dict[str, float | int | bool | str | None] = {}
    for case in cases:
        if case.error:
            continue
        problem = build(FAULTS[case.case], case.seed)
        truth = reference_rows(problem)
        broken = [row for row in truth if not healthy(row)]
        measurements[f"parameters that need attention ({case.label})"] = len(broken)
        said = learner_rows(case, len(truth))
        if said is None:
            for key in ("rows", *FIELD_CHECKS):
                found[key].append(f"in case '{case.label}' no readable audit came back")
        else:
            for row, answer in zip(truth, said, strict=True):
                for key, text in compare(row, answer):
                    found[key].append(f"in case '{case.label}' {text}")
        found["leaves-model-alone"].extend(
            f"in case '{case.label}' {text}" for text in untouched(case, problem)
        )

    titles = {
        "rows": f"Your audit returned one row per named parameter in all {len(cases)} hidden runs.",
        "requires-grad": "requires_grad is right for every parameter of every hidden run.",
        "in-optimizer": "in_optimizer is right for every parameter, across every param group.",
        "grad-state": "Every gradient's state is right: none, zero, finite and non-finite.",
        "grad-norm": f"Every gradient norm matches the judge's to within {RELATIVE:g} (relative).",
        "leaves-model-alone": "Every weight and every .grad came back as the audit found them.",
    }
    errored = [case for case in cases if case.error]
    for key, passed in titles.items():
        if errored:
            checks.append(missing_evidence(exercise, key, errored, shown=1))
        else:
            checks.append(findings_check(exercise, key, found[key], passed))
    return Assessment(checks, measurements)


def healthy(row: Row) -> bool:
    return row.requires_grad and row.group is not None and row.grad == "finite"


def learner_rows(case: CaseEvidence, count: int) -> list[Said] | None:
    """The audit table that came back, if it has a readable row per parameter."""
    table = (case.values or {}).get("audit")
    if table is None or table.dtype != torch.float64 or tuple(table.shape) != (count, len(COLUMNS)):
        return None
    rows = []
    for requires_grad, in_optimizer, grad, given, norm in table.tolist():
        flags = (requires_grad, in_optimizer, given)
        if any(flag not in (0.0, 1.0) for flag in flags) or grad not in range(len(STATES)):
            return None
        rows.append(
            Said(
                requires_grad == 1.0,
                in_optimizer == 1.0,
                STATES[int(grad)],
                norm if given else None,
            )
        )
    return rows


def compare(row: Row, said: Said) -> list[tuple[str, str]]:
    """(check key, what is wrong) for each field of one row the learner got wrong."""
    name = repr(row.name)
    wrong = []
    if said.requires_grad != row.requires_grad:
        text = (
            f"your audit said {name} requires a gradient; it does not (requires_grad is False)"
            if said.requires_grad
            else f"your audit said {name} does not require a gradient; it does "
            "(requires_grad is True)"
        )
        wrong.append(("requires-grad", text))
    if said.in_optimizer != (row.group is not None):
        text = (
            f"your audit said {name} is in the optimizer; it is not (no param group holds it)"
            if said.in_optimizer
            else f"your audit said {name} is not in the optimizer; it is, in param group "
            f"{row.group} of {row.groups}"
        )
        wrong.append(("in-optimizer", text))
    if said.grad != row.grad:
        wrong.append(
            (
                "grad-state",
                f"your audit said the gradient of {name} is '{said.grad}'; it is '{row.grad}' "
                f"({MEANING[row.grad]})",
            )
        )
    problem = norm_problem(row, said.norm)
    if problem:
        wrong.append(("grad-norm", problem))
    return wrong


def norm_problem(row: Row, norm: float | None) -> str | None:
    name = repr(row.name)
    if row.norm is None:
        if norm is None:
            return None
        return (
            f"your audit gave {name} a gradient norm of {norm:.4g}; its gradient is "
            f"'{row.grad}' ({MEANING[row.grad]}), so grad_norm must be None"
        )
    if norm is None:
        return (
            f"your audit gave {name} no gradient norm (None); its gradient is '{row.grad}', "
            "so grad_norm is the L2 norm of .grad"
        )
    if close(norm, row.norm):
        return None
    text = (
        f"your audit gave {name} a gradient norm of {norm:.4g}, which is not the L2 norm of "
        f"its .grad (to within {RELATIVE:g}, relative)"
    )
    looks = [what for what, value in row.lookalikes.items() if close(norm, value)]
    if looks:
        return text + f": it matches {looks[0]}"
    return text + f"; it is too {'high' if norm > row.norm else 'low'}"


def close(value: float, reference: float) -> bool:
    return math.isfinite(value) and abs(value - reference) <= ABSOLUTE + RELATIVE * abs(reference)


def untouched(case: CaseEvidence, problem: Problem) -> list[str]:
    """What the audit changed: weights (against the rebuilt ones) and gradients."""
    changed = []
    if case.weights is not None:
        moved = [
            name
            for name, start in case.initial.items()
            if not torch.equal(case.weights[name], start)
        ]
        if moved:
            changed.append(
                f"{moved[0]!r} had changed after your audit returned: an audit "
                "must leave the weights as it found them"
            )
    values = case.values or {}
    for name, parameter in problem.model.named_parameters():
        came = values.get(f"grad:{name}")
        grad = parameter.grad
        if grad is None and came is not None:
            changed.append(f"{name!r} had a gradient after your audit returned, and none before")
        elif grad is not None and came is None:
            changed.append(
                f"the gradient of {name!r} was gone (None) after your audit returned: an audit "
                "must leave .grad as it found it"
            )
        elif grad is not None and came is not None and not same(came, grad):
            changed.append(
                f"the gradient of {name!r} had changed after your audit returned: an audit must "
                "leave .grad as it found it"
            )
    return changed


def same(came: torch.Tensor, grad: torch.Tensor) -> bool:
    if came.shape != grad.shape or came.dtype != grad.dtype:
        return False
    return bool(torch.allclose(came, grad, rtol=1e-5, atol=1e-7, equal_nan=True))
