"""Runs outside the sandbox: each hidden run rebuilt here from its seed, stepped once with
trusted code, and measured: the weights that came back against where that one step puts them,
and the number the learner's function returned against the relative update measured here.

No drill signature: the signature of "Optimizer membership" describes a training run, and one
measured step has none, so the judgement carries no verdict.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import torch

from drills.catalog.optimizer_membership.exercises.relative_update.problem import (
    SETUPS,
    Problem,
    build,
    one_thread,
)
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    weights_check,
)
from drills.exercises.transport import Value

RELATIVE = 1e-4  # on the ratio: float32 rounding, nothing more
WEIGHTS_RTOL, WEIGHTS_ATOL = 1e-5, 1e-7
# Which check reads which hidden run's number.
CHECK_OF = {"sgd": "ratio", "adam": "ratio", "momentum": "ratio"}
CHECK_OF |= {"not-held": "not-held", "at-zero": "zero-norm"}


@dataclass(frozen=True)
class Truth:
    """One hidden run, stepped here."""

    name: str  # the parameter asked about
    ratio: float | None  # ||after - before|| / ||before||; None where ||before|| is 0
    after: dict[str, torch.Tensor]  # every weight after one step
    lookalikes: dict[str, float]  # what a wrong number may be instead: description -> value


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {k: v.detach().clone() for k, v in build(SETUPS[case], seed).model.state_dict().items()}


def stepped(problem: Problem, steps: int = 1, *, cleared: bool = False) -> dict[str, torch.Tensor]:
    with one_thread():
        if cleared:
            problem.optimizer.zero_grad(set_to_none=False)
        for _ in range(steps):
            problem.optimizer.step()
    return {k: v.detach().clone() for k, v in problem.model.state_dict().items()}


def truth_of(setup: str, seed: int) -> Truth:
    problem = build(setup, seed)
    parameter = dict(problem.model.named_parameters())[problem.name]
    before = parameter.detach().double().clone()
    grad = parameter.grad
    assert grad is not None
    lr = float(problem.optimizer.param_groups[0]["lr"])
    after = stepped(problem)
    size = float(before.norm())
    delta = float((after[problem.name].double() - before).norm())
    lookalikes = {}
    if size > 0:
        lookalikes = {
            "the gradient's norm over the weight's: that measures the gradient, not the update "
            "the optimizer made of it": float(grad.double().norm()) / size,
            "lr times the gradient's norm over the weight's: what plain SGD would do, not what "
            "this optimizer did": lr * float(grad.double().norm()) / size,
        }
    new_size = float(after[problem.name].double().norm())
    if new_size > 0:
        lookalikes[
            "the update over the weight's norm after the step; the ratio divides by its "
            "norm before it"
        ] = delta / new_size
    return Truth(problem.name, delta / size if size > 0 else None, after, lookalikes)


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    found: dict[str, list[str]] = {"one-step": [], "ratio": [], "not-held": [], "zero-norm": []}
    measurements: dict[str, float | int | bool | str | None] = {}
    for case in cases:
        if case.error:
            continue
        setup = SETUPS[case.case]
        truth = truth_of(setup, case.seed)
        name = truth.name
        returned = case.frames.value(case.case, "result")
        measurements[f"relative update of {name} ({case.label})"] = truth.ratio
        measurements[f"your number ({case.label})"] = returned.value if returned else None
        if case.weights is not None:
            problem = step_problem(case, setup, truth)
            if problem:
                found["one-step"].append(f"in case '{case.label}' {problem}")
        problem = number_problem(setup, name, returned, truth, moved=delta_of(truth, case, name))
        if problem:
            found[CHECK_OF[setup]].append(f"in case '{case.label}' {problem}")

    checks = [weights_check(exercise, cases, "weights", what="weights", shown=1)]
    passed = {
        "one-step": "Every weight ended where one optimizer step puts it.",
        "ratio": f"Your numbers match the relative update measured here (within {RELATIVE:g}).",
        "not-held": "For the parameter the optimizer does not hold you returned 0.",
        "zero-norm": "For the parameter at zero you returned None, as the docstring asks.",
    }
    errored = [case for case in cases if case.error]
    for key, text in passed.items():
        if errored:
            checks.append(missing_evidence(exercise, key, errored, shown=1))
        elif key == "one-step" and any(case.weights is None for case in cases):
            checks.append(missing_evidence(exercise, key, [c for c in cases if c.weights is None]))
        else:
            checks.append(findings_check(exercise, key, found[key], text))
    return Assessment(checks, measurements)


def matches(weights: dict[str, torch.Tensor], reference: dict[str, torch.Tensor]) -> bool:
    return all(
        torch.allclose(weights[name], value, rtol=WEIGHTS_RTOL, atol=WEIGHTS_ATOL)
        for name, value in reference.items()
    )


def step_problem(case: CaseEvidence, setup: str, truth: Truth) -> str | None:
    """What is wrong with the weights that came back, as one step's result; None if nothing."""
    assert case.weights is not None
    if matches(case.weights, truth.after):
        return None
    text = "the weights after your function returned are not where one optimizer step puts them"
    if matches(case.weights, case.initial):
        return text + ": no weight moved (no step was taken, or it was taken without gradients)"
    if matches(case.weights, stepped(build(setup, case.seed), 2)):
        return text + ": they are where two steps put them"
    if matches(case.weights, stepped(build(setup, case.seed), cleared=True)):
        return text + ": they are where a step with zeroed gradients puts them"
    first = next(n for n, v in truth.after.items() if not torch.allclose(case.weights[n], v))
    return text + f" ({first!r} is off)"


def delta_of(truth: Truth, case: CaseEvidence, name: str) -> bool:
    """Whether the named parameter moved in the weights that came back."""
    return case.weights is not None and not torch.equal(case.weights[name], case.initial[name])


def number_problem(
    setup: str, name: str, returned: Value | None, truth: Truth, *, moved: bool
) -> str | None:
    """What is wrong with the returned number; None if nothing."""
    if returned is None:
        return "no number came back"
    value, what = returned.value, returned.returned
    if setup == "at-zero":
        if what == "NoneType":
            return None
        about = f"{shown(value)}" if value is not None else f"{what} that is not a finite number"
        return (
            f"you returned {about} for {name!r}, whose norm before the step is 0: the ratio is "
            "undefined there, and the docstring asks for None"
        )
    if value is None:
        if what == "NoneType":
            return f"you returned None for {name!r}, whose norm before the step is not 0"
        return f"you returned {what} for {name!r}, not a finite number"
    assert truth.ratio is not None
    if setup == "not-held":
        if value == 0.0:
            return None
        text = (
            f"you returned {shown(value)} for {name!r}; the optimizer does not hold it, so the "
            "step cannot move it and the answer is 0.0"
        )
        return text + lookalike(value, truth)
    if abs(value - truth.ratio) <= RELATIVE * truth.ratio:
        return None
    if value == 0.0:
        if moved:
            return (
                f"you returned 0.0 for {name!r}, yet the step moved it (the weights that came "
                "back say so)"
            )
        return f"you returned 0.0 for {name!r}: one step moves it, but yours did not"
    text = (
        f"you returned {shown(value)} for {name!r}, which is not ||Δθ|| / ||θ|| across the step "
        f"(to within {RELATIVE:g}, relative)"
    )
    return text + (
        lookalike(value, truth) or f"; it is too {'high' if value > truth.ratio else 'low'}"
    )


def lookalike(value: float, truth: Truth) -> str:
    for what, other in truth.lookalikes.items():
        if math.isfinite(other) and abs(value - other) <= RELATIVE * abs(other):
            return f": it matches {what}"
    return ""


def shown(value: float) -> str:
    text = f"{value:.4g}"
    return text if any(mark in text for mark in ".en") else text + ".0"
