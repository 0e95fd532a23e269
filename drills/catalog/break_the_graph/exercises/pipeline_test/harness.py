"""Runs inside the sandbox with the learner's file: hands one hidden run's model factory, batch
and loss to test_every_layer_learns() and sends back how the test ended: it returned (passed),
or it failed an assert (AssertionError, or pytest.fail). Anything else it raises is not a
verdict on the model: it goes back as this run's error, with the learner's traceback."""

from __future__ import annotations

from types import ModuleType

import torch
from torch import nn

from drills.catalog.break_the_graph.exercises.pipeline_test.problem import (
    build_batch,
    build_model,
    loss_of,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report

PASSED, FAILED = 0.0, 1.0  # the outcome as it crosses the wall


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    made: list[nn.Module] = []

    def make_model() -> nn.Module:
        model = build_model(case, seed)
        made.append(model)
        return model

    batch = build_batch(case, seed)
    try:
        learner.test_every_layer_learns(make_model, batch, loss_of(case, seed))
        outcome = PASSED
    except AssertionError:
        outcome = FAILED
    except BaseException as exc:
        if not from_pytest(exc):
            raise  # inside.py sends it back as this run's error, in the learner's terms
        if type(exc).__name__ != "Failed":
            raise ContractError(
                f"your test ended with pytest's {type(exc).__name__} (a skip or an exit); "
                "it must pass, or fail an assert"
            ) from None
        outcome = FAILED  # pytest.fail(...) fails the test as an assert does
    # No weights to judge: the outcome and how many models the test built are all there is.
    sent = torch.tensor([outcome, float(len(made))], dtype=torch.float64)
    return CaseOutput(weights={}, tensors={"outcome": sent})


def from_pytest(exc: BaseException) -> bool:
    """pytest's own outcomes (fail, skip, exit) derive from BaseException, not Exception, through
    its OutcomeException (whose __module__ pytest sets to "builtins", so the name is read)."""
    return any(cls.__name__ == "OutcomeException" for cls in type(exc).__mro__)
