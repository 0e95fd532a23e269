"""Stage 1 of the judge, the entry module the sandbox runs: `main(request, channel)`.

It compiles the learner's file as a fresh module named `exercise` (tracebacks read
"exercise.py, line 12"), checks that the functions the exercise asks for exist, then lets the
exercise's harness run each hidden seed and sends back what it produced: point frames for the
live curve, the trained weights as a safetensors blob, and the values the learner's functions
returned. It decides nothing: the learner's code runs in this very process and can tamper with
all of it, so the judge (drills/exercises/judge.py) rebuilds and measures everything outside.

request = {"exercise": slug, "code": "...", "seeds": [hidden seed, ...]}
"""

from __future__ import annotations

import importlib
import linecache
import math
import sys
import traceback
import types
from typing import Any

import torch

from drills.exercises.contract import ContractError, Exercise
from drills.exercises.registry import get_exercise
from drills.exercises.running import CaseOutput, Report
from drills.exercises.tensors import save_tensors
from drills.exercises.transport import MAX_NAME, MAX_POINTS, Channel

FILENAME = "exercise.py"
MODULE = "exercise"
POINTS_PER_RUN = MAX_POINTS // 4


def main(request: dict[str, Any], channel: Channel) -> None:
    exercise, code, seeds = read_request(request)
    torch.set_num_threads(1)
    torch.use_deterministic_algorithms(True)
    harness = importlib.import_module(exercise.harness)  # imported before any learner code runs

    try:
        learner = load_learner(code)
    except SyntaxError as exc:
        fail(channel, None, syntax_message(exc))
        return
    except (Exception, SystemExit) as exc:
        fail(channel, None, "your file failed while it was loading:\n" + learner_traceback(exc))
        return
    missing = [name for name in exercise.provides if not callable(getattr(learner, name, None))]
    if missing:
        names = ", ".join(f"{name}()" for name in missing)
        fail(channel, None, f"exercise.py does not define {names}, which the exercise calls")
        return

    for case, seed in enumerate(seeds):
        torch.manual_seed(seed)  # whatever randomness the learner's loop draws, it repeats
        try:
            output: CaseOutput = harness.run_case(
                learner, case, seed, point_sender(channel, exercise.cases[case])
            )
        except ContractError as exc:
            fail(channel, case, str(exc))
            continue
        except (Exception, SystemExit) as exc:
            fail(channel, case, learner_traceback(exc))
            continue
        send_case(channel, case, seed, output)


def read_request(request: dict[str, Any]) -> tuple[Exercise, str, list[int]]:
    exercise = get_exercise(str(request["exercise"]))
    code, seeds = request["code"], request["seeds"]
    if not isinstance(code, str):
        raise TypeError("request['code'] must be text")
    if not isinstance(seeds, list) or len(seeds) != len(exercise.cases):
        raise ValueError(f"request['seeds'] must list {len(exercise.cases)} seeds")
    if not all(isinstance(seed, int) and not isinstance(seed, bool) for seed in seeds):
        raise TypeError("request['seeds'] must be integers")
    return exercise, code, seeds


def load_learner(code: str) -> types.ModuleType:
    """The learner's file as a fresh module; SyntaxError, or whatever its top level raises."""
    compiled = compile(code, FILENAME, "exec", dont_inherit=True)
    module = types.ModuleType(MODULE)
    module.__file__ = FILENAME
    sys.modules[MODULE] = module  # dataclasses look their module up here
    linecache.cache[FILENAME] = (len(code), None, code.splitlines(True), FILENAME)
    exec(compiled, module.__dict__)
    return module


def point_sender(channel: Channel, label: str) -> Report:
    """The `report(name, step, value)` the learner's loop draws its live curve with."""
    sent = 0

    def report(name: str, step: int, value: float) -> None:
        nonlocal sent
        if sent >= POINTS_PER_RUN:
            return  # the curve is for display; a flood of points is dropped, not an error
        if not isinstance(name, str) or not isinstance(step, int):
            raise ContractError("report() takes (name: str, step: int, value: float)")
        value = float(value)
        if not math.isfinite(value):
            return  # the curve draws finite points only
        sent += 1
        full = f"{name[: MAX_NAME - len(label) - 1]}@{label}"
        channel.send({"kind": "point", "name": full, "step": step, "value": value})

    return report


def send_case(channel: Channel, case: int, seed: int, output: CaseOutput) -> None:
    blobs = {f"weights-{case}": save_tensors(output.weights)}
    if output.tensors:
        blobs[f"values-{case}"] = save_tensors(output.tensors)
    for name, (value, returned) in output.numbers.items():
        frame = {"kind": "value", "case": case, "name": name, "value": value, "returned": returned}
        channel.send(frame)
    channel.send({"kind": "case", "case": case, "seed": seed}, blobs)


def fail(channel: Channel, case: int | None, message: str) -> None:
    print(message, file=sys.stderr)
    channel.send({"kind": "error", "case": case, "message": message})


def syntax_message(exc: SyntaxError) -> str:
    where = f"line {exc.lineno}" if exc.lineno else "somewhere"
    text = f"{FILENAME}, {where}: {exc.msg}"
    if exc.text and exc.text.strip():
        text += f"\n    {exc.text.strip()}"
    return text


def learner_traceback(exc: BaseException) -> str:
    """The traceback as the learner needs it: the frames in their own file, then the error."""
    frames = [
        frame for frame in traceback.extract_tb(exc.__traceback__) if frame.filename == FILENAME
    ]
    lines = [f"{FILENAME}, line {frame.lineno}, in {frame.name}" for frame in frames[-4:]]
    lines = [
        line + (f"\n    {frame.line.strip()}" if frame.line else "")
        for line, frame in zip(lines, frames[-4:], strict=True)
    ]
    return "\n".join([*lines, f"{type(exc).__name__}: {exc}"])
