"""The judge's own rules: not attempted, syntax and run errors, sandbox statuses, and stage 2
fed garbage (it must answer, never crash)."""

from typing import Any

import pytest

from drills.exercises.judge import borrowed, decide, hidden_seeds, judge, same_as_starter
from drills.exercises.registry import get_exercise
from drills.sandbox.finished import Status
from tests.exercises.judging import Points, judgement, statuses
from tests.exercises.sandbox_double import Finished

OVERFIT = get_exercise("overfit-shuffled-pairs")


def no_run(*args: Any, **kwargs: Any) -> Finished:
    raise AssertionError("the sandbox must not run")


def test_the_starter_as_handed_out_is_not_attempted() -> None:
    for code in (OVERFIT.starter, OVERFIT.starter.replace("\n", "   \n") + "\n\n\n"):
        found = judge(OVERFIT, code, 0, report=Points(), run=no_run)
        assert found.status == "not-attempted"
        assert found.checks == ()
    assert not same_as_starter(OVERFIT, OVERFIT.starter + "# changed\n")


def test_a_syntax_error_names_its_line_without_running() -> None:
    code = OVERFIT.solution.replace("    model.train()\n", "    model.train(\n", 1)
    line = code.splitlines().index("    model.train(") + 1
    found = judge(OVERFIT, code, 0, report=Points(), run=no_run)
    assert found.status == "error"
    assert found.message and f"exercise.py, line {line}" in found.message
    assert {check.status for check in found.checks} == {"error"}
    assert f"line {line}" in found.checks[0].message


@pytest.mark.parametrize(
    "line",
    [
        "from drills.kit.audit import grad_state",
        "import drills.kit.audit as kit",
        "kit = __import__('importlib').import_module('drills.kit.audit')",
    ],
)
def test_a_write_it_file_that_borrows_the_kits_tool_fails_without_running(line: str) -> None:
    audit = get_exercise("parameter-audit")
    found = judge(audit, f"{line}\n{audit.solution}", 0, report=Points(), run=no_run)
    assert found.status == "failed"
    assert found.message and "line 1" in found.message and "yourself" in found.message
    # A fix-the-loop file may import what its starter does.
    assert borrowed(OVERFIT, "import drills.kit.audit\n") is None


def test_an_exception_in_the_learners_code_is_an_error_with_its_line() -> None:
    code = OVERFIT.solution.replace(
        "        loss.backward()\n", "        loss.backward()\n        1 / 0\n"
    )
    line = code.splitlines().index("        1 / 0") + 1
    found = judgement(OVERFIT.slug, code)
    assert found.status == "error"
    assert found.message and f"exercise.py, line {line}, in train" in found.message
    assert "ZeroDivisionError" in found.message
    assert statuses(found)["fits-5"] == "error"


@pytest.mark.parametrize(
    ("code", "says"),
    [
        ("import torch\n", "does not define train()"),
        ("import sys\nsys.exit(0)\n", "failed while it was loading"),
        ("train = 3\n", "does not define train()"),
    ],
)
def test_a_file_that_cannot_be_called_is_an_error(code: str, says: str) -> None:
    found = judgement(OVERFIT.slug, code)
    assert found.status == "error"
    assert found.message and says in found.message


@pytest.mark.parametrize("status", ["failed", "timeout", "too-much-output", "unavailable"])
def test_a_sandbox_that_did_not_finish_ok_is_an_error_with_its_reason(status: Status) -> None:
    finished = Finished(status, None, stderr="Traceback ...\nMemoryError", reason="it said why")
    found = decide(OVERFIT, 0, hidden_seeds(OVERFIT, 0), finished)
    assert found.status == "error"
    assert found.message and "it said why" in found.message
    assert "MemoryError" in found.stderr
    assert [check.key for check in found.checks] == [spec.key for spec in OVERFIT.checks]
    assert {check.status for check in found.checks} == {"error"}


GARBAGE_FRAMES: list[Any] = [
    "not a dict",
    {"no": "kind"},
    {"kind": 7},
    {"kind": "point", "name": "x" * 1000, "step": 1, "value": 1.0},
    {"kind": "point", "name": "loss", "step": True, "value": float("nan")},
    {"kind": "case", "case": -1},
    {"kind": "value", "case": 0, "name": "result", "value": "1.0"},
    {"kind": "error", "case": "all", "message": "x"},
    {"kind": "something-new", "payload": [1, 2, 3]},
]


def test_stage_two_survives_garbage() -> None:
    blobs = {"weights-0": b"\x00" * 100, "weights-1": "text", "weights-2": b"{}" * 10}
    finished = Finished("ok", 0, tuple(GARBAGE_FRAMES), blobs)  # type: ignore[arg-type]
    found = decide(OVERFIT, 0, hidden_seeds(OVERFIT, 0), finished)
    assert found.status == "error"  # malformed frames of known kinds
    assert statuses(found) == dict.fromkeys(statuses(found), "fail")
    assert "not a safetensors file" in found.checks[0].message
    assert len(found.message or "") < 2000


def test_hidden_seeds_are_fixed_by_exercise_and_seed_and_differ_between_them() -> None:
    assert hidden_seeds(OVERFIT, 3) == hidden_seeds(OVERFIT, 3)
    assert hidden_seeds(OVERFIT, 3) != hidden_seeds(OVERFIT, 4)
    assert len(set(hidden_seeds(OVERFIT, 0))) == len(OVERFIT.cases)
    other = get_exercise("graph-detached-features")
    assert hidden_seeds(other, 0)[0] != hidden_seeds(OVERFIT, 0)[0]
