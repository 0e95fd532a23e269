"""Runs outside the sandbox: the judge builds each hidden run's model, batch and loss from its
seed, runs one backward itself and reads every parameter (does it require a gradient, did a
gradient reach it, is any entry of it non-zero). A run where some parameter would not learn is
broken, and the learner's test must fail there; where every parameter would learn, it must
pass. What came back from the sandbox is only how the learner's test ended.

No drill signature: the drill's signature describes a training run, and a test of one
backward has none, so the judgement carries no verdict.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from drills.catalog.break_the_graph.exercises.pipeline_test.problem import (
    FAULTS,
    build_batch,
    build_model,
    loss_of,
    one_thread,
)
from drills.exercises.contract import CheckStatus, Exercise
from drills.exercises.evidence import Assessment, CaseEvidence, listed, missing_evidence, result

# One check per hidden run, in the order of FAULTS (and of the exercise's cases).
CHECK_OF = dict(
    zip(
        FAULTS,
        ("healthy", "small-gradients", "cut-off", "frozen", "times-zero", "unused", "dead-relus"),
        strict=True,
    )
)
PASSED, FAILED = 0.0, 1.0  # as harness.py sends them


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return {}  # no weights are judged: the harness sends an empty blob


def silent_parameters(case: int, seed: int) -> tuple[dict[str, str], float]:
    """The parameters that would not learn from one backward on the run's batch, each with why,
    and the smallest gradient norm among those that would."""
    model = build_model(case, seed)
    inputs, targets = build_batch(case, seed)
    with one_thread():
        loss_of(case, seed)(model(inputs), targets).backward()  # type: ignore[no-untyped-call]
    silent, smallest = {}, float("inf")
    for name, parameter in model.named_parameters():
        grad = parameter.grad
        if not parameter.requires_grad:
            silent[name] = "requires_grad is False"
        elif grad is None:
            silent[name] = "no gradient reaches it: .grad is None"
        elif torch.count_nonzero(grad) == 0:
            silent[name] = "its gradient is all zeros"
        else:
            smallest = min(smallest, float(grad.double().norm()))
    return silent, smallest


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = []
    measurements: dict[str, float | int | bool | str | None] = {}
    for case in cases:
        key = CHECK_OF[FAULTS[case.case]]
        if case.error:
            checks.append(missing_evidence(exercise, key, [case]))
            continue
        silent, smallest = silent_parameters(case.case, case.seed)
        measurements[f"parameters that would not learn ({case.label})"] = len(silent)
        if not silent:
            measurements[f"smallest gradient norm ({case.label})"] = smallest
        sent = (case.values or {}).get("outcome")
        if sent is None or sent.dtype != torch.float64 or tuple(sent.shape) != (2,):
            checks.append(result(exercise, key, "fail", f"{case.label}: no outcome came back"))
            continue
        outcome, built = float(sent[0]), int(sent[1])
        if outcome not in (PASSED, FAILED):
            checks.append(result(exercise, key, "fail", f"{case.label}: no outcome came back"))
            continue
        measurements[f"your test ({case.label})"] = "failed" if outcome == FAILED else "passed"
        status, text = verdict(case.label, silent, smallest, outcome == FAILED, built)
        checks.append(result(exercise, key, status, text))
    return Assessment(checks, measurements)


def verdict(
    label: str, silent: dict[str, str], smallest: float, failed: bool, built: int
) -> tuple[CheckStatus, str]:
    """(check status, message) for one run: a test must fail exactly where some parameter
    would not learn."""
    if silent and failed:
        names = listed([repr(name) for name in silent])
        return "pass", f"Your test failed on '{label}', where {names} would not learn."
    if not silent and not failed:
        return "pass", f"Your test passed on '{label}', where every parameter learns."
    if silent:
        named = [f"{name!r} ({why})" for name, why in silent.items()]
        text = (
            f"In case '{label}' your test passed, yet the judge's own backward on the same model "
            f"and batch finds parameters that would not learn: {listed(named, 3)}"
        )
        if built == 0:
            text += "; your test never called make_model()"
        return "fail", text + "."
    return "fail", (
        f"In case '{label}' your test failed an assert, yet every parameter of that model gets "
        "a gradient from one backward, and none of them is all zeros: the smallest gradient "
        f"norm is {smallest:.1e}."
    )
