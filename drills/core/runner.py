"""Run one drill attempt and return its evidence record: a plain, JSON-safe dict."""

from __future__ import annotations

import platform
import time
from collections.abc import Mapping
from typing import Any

import torch

from drills.core.command import replay_command
from drills.core.contract import Drill, DrillError, DrillOutcome
from drills.core.digest import json_safe, metrics_digest
from drills.core.knobs import resolve_knobs
from drills.core.limits import (
    LimitedReporter,
    Limits,
    MemoryLimitExceeded,
    RunCancelled,
    TimeLimitExceeded,
)
from drills.core.recorder import Emit, MetricRecorder
from drills.core.registry import get_drill
from drills.core.seed import MAX_SEED as MAX_SEED  # re-exported: the bound check_seed() holds


def run_drill(
    slug: str,
    raw_knobs: Mapping[str, object],
    seed: int,
    *,
    emit: Emit | None = None,
    limits: Limits | None = None,
    flush_interval_s: float = 0.1,
) -> dict[str, Any]:
    """Run a drill and return its record.

    Bad requests (unknown drill, bad knob, bad seed) raise before anything runs. After that
    this never raises: failures, time-outs and resource limits become the record's status.
    """
    drill = get_drill(slug)
    knobs = resolve_knobs(drill, raw_knobs)
    check_seed(seed)
    limits = limits or Limits()

    # Determinism first: same torch version, thread count and CPU capability give the same bits.
    torch.manual_seed(seed)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)

    recorder = MetricRecorder(emit, flush_interval_s=flush_interval_s)
    status, error, outcome = "ok", None, None
    started = time.monotonic()
    try:
        outcome = drill.run(knobs, seed, LimitedReporter(recorder, limits, started_at=started))
        error = outcome.error
        status = "error" if error else "ok"
    except DrillError as exc:
        status, error, outcome = "error", str(exc), exc.outcome
    except TimeLimitExceeded as exc:
        status, error = "timed_out", str(exc)
    except MemoryLimitExceeded as exc:
        status, error = "resource_limit", str(exc)
    except RunCancelled as exc:
        status, error = "cancelled", str(exc)
    except Exception as exc:  # an unexpected bug in a drill still ends as a record
        status, error = "error", f"{type(exc).__name__}: {exc}"
    compute_s = time.monotonic() - started
    try:
        recorder.flush()
    except Exception as exc:  # a failing emit must not lose the record it was streaming
        if status == "ok":
            status, error = "error", f"{type(exc).__name__} in emit: {exc}"

    return build_record(drill, knobs, seed, status, error, outcome, recorder.series, compute_s)


def check_seed(seed: object) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")


def build_record(
    drill: Drill,
    knobs: dict[str, Any],
    seed: int,
    status: str,
    error: str | None,
    outcome: DrillOutcome | None,
    metrics: dict[str, list[list[float]]],
    compute_s: float,
) -> dict[str, Any]:
    signature = dict(outcome.signature) if outcome else {}
    record = {
        "drill": drill.slug,
        "drill_version": drill.version,
        "knobs": knobs,
        "seed": seed,
        "command": replay_command(drill.slug, knobs, seed),
        "status": status,
        "error": error,
        "metrics": metrics,
        "diagnostics": outcome.diagnostics if outcome else {},
        "signature": signature,
        # Only a run that produced numbers can be compared with a prediction.
        "observed": drill.diagnose(signature, error) if outcome else None,
        "inputs": outcome.inputs if outcome else {},
        "environment": environment(drill),
        "digest": metrics_digest(metrics),
        "timings": {"compute_s": compute_s},
    }
    safe: dict[str, Any] = json_safe(record)
    return safe


def environment(drill: Drill) -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "cpu_capability": torch.backends.cpu.get_cpu_capability(),
        "deterministic": torch.are_deterministic_algorithms_enabled(),
        "drill_version": drill.version,
    }
