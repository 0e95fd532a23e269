"""An exercise run as the worker stores it: a record shaped like a drill run's
(drills/core/runner.py), with the judge's Judgement under "exercise".

    run_exercise(exercise, code, seed, emit=..., wall_s=..., pool=...) -> record
    exercise_command(slug, seed) -> the command that judges the same file (CODE_FILE) again
"""

from __future__ import annotations

import functools
import platform
import shlex
from typing import Any

from drills.core.digest import json_safe, metrics_digest
from drills.core.recorder import Emit, MetricRecorder
from drills.core.registry import get_drill
from drills.exercises.contract import Exercise, Judgement
from drills.exercises.judge import judge
from drills.exercises.transport import SandboxRun

# The record's status for each way a judgement can end (the drill runner's vocabulary): a file
# that ran and failed its checks is a run that finished; one that could not be judged is not.
RECORD_STATUS = {"timeout": "timed_out", "too-much-output": "resource_limit"}
# The name the replay command reads the learner's file under: the app serves a run's code
# under this name (app/exercises/routes.py), so the downloaded file and the command agree.
CODE_FILE = "exercise.py"


def exercise_command(slug: str, seed: int) -> str:
    """The command that judges the stored file (saved as CODE_FILE) again, on the same seeds."""
    return shlex.join(
        ["python", "-m", "drills", "exercise", "run", slug, "--code", CODE_FILE]
        + ["--seed", str(seed)]
    )


def run_exercise(
    exercise: Exercise,
    code: str,
    seed: int,
    *,
    emit: Emit | None = None,
    wall_s: float | None = None,
    pool: object | None = None,
    run: SandboxRun | None = None,
) -> dict[str, Any]:
    """Judge `code` (in the real sandbox unless `run` is given) and return its record; the live
    curve goes to `emit` in batches as it arrives."""
    if run is None:
        from drills.sandbox import Limits
        from drills.sandbox import run as sandbox_run

        run = (
            sandbox_run
            if wall_s is None
            else functools.partial(sandbox_run, limits=Limits(wall_s=wall_s))
        )
    recorder = MetricRecorder(emit)
    judgement = judge(exercise, code, seed, report=recorder, run=run, pool=pool)
    recorder.flush()
    return build_record(exercise, seed, judgement, recorder.series)


def record_status(judgement: Judgement) -> str:
    if judgement.sandbox in RECORD_STATUS:
        return RECORD_STATUS[judgement.sandbox]
    return "error" if judgement.status == "error" else "ok"


def build_record(
    exercise: Exercise, seed: int, judgement: Judgement, metrics: dict[str, list[list[float]]]
) -> dict[str, Any]:
    drill = get_drill(exercise.drill)
    status = record_status(judgement)
    record = {
        "drill": drill.slug,
        "drill_version": drill.version,
        "knobs": {},
        "seed": seed,
        "command": exercise_command(exercise.slug, seed),
        "status": status,
        "error": judgement.message if status != "ok" else None,
        "metrics": metrics,
        "diagnostics": {
            "checks": [check.as_dict() for check in judgement.checks],
            "measurements": judgement.measurements,
        },
        "signature": judgement.signature,
        "observed": judgement.verdict,
        "inputs": {"exercise": exercise.slug, "hidden_runs": list(exercise.cases)},
        "environment": environment(),
        "digest": metrics_digest(metrics),
        "timings": {"compute_s": judgement.wall_s},
        "exercise": judgement.as_dict(),
    }
    safe: dict[str, Any] = json_safe(record)
    return safe


def environment() -> dict[str, Any]:
    import torch

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
    }
