"""The figures bench/scale_out.py reports for one load's window: throughput against the compute
limit, CPU per run of each process kind, and what the submitters and the class saw."""

import os
import statistics
from typing import Any

from support.classroom import Report, percentiles
from support.process_cpu import CpuWindow


def throughput_figures(
    completed: int, window_s: float, workers: int, compute_alone_s: float, compute_s: list[float]
) -> dict[str, Any]:
    """The limit: what `workers` busy workers finish per second at the drill's compute time
    alone. More workers than cores cannot reach it (they share the cores), so the machine's
    limit is printed beside it: as many busy workers as it has cores, at most."""
    runs_per_s = completed / window_s
    limit = workers / compute_alone_s
    machine_limit = min(workers, os.cpu_count() or 1) / compute_alone_s
    in_window = statistics.median(compute_s) if compute_s else None
    return {
        "runs_completed": completed,
        "runs_per_s": round(runs_per_s, 2),
        "compute_ms_alone": round(1000 * compute_alone_s, 1),
        "compute_limit_runs_per_s": round(limit, 2),
        "throughput_of_limit": round(runs_per_s / limit, 2),
        "machine_limit_runs_per_s": round(machine_limit, 2),
        "throughput_of_machine_limit": round(runs_per_s / machine_limit, 2),
        "compute_ms_p50_in_window": round(1000 * in_window, 1) if in_window else None,
        "compute_limit_in_window_runs_per_s": round(workers / in_window, 2) if in_window else None,
        # The share of the window the workers spent computing runs: how well the queue keeps
        # them fed, whatever the machine's speed or the sharing of its cores did to each run.
        "workers_busy": round(runs_per_s * in_window / workers, 2) if in_window else None,
    }


def cpu_figures(cpu: CpuWindow, completed: int) -> dict[str, Any]:
    per_run = {
        f"{role}_cpu_ms_per_run": round(1000 * seconds / completed, 1) if completed else None
        for role, seconds in cpu.seconds.items()
    }
    return per_run | {
        "cpu_s": {role: round(seconds, 2) for role, seconds in cpu.seconds.items()},
        "processes": cpu.processes,
        "processes_ended_during_window": cpu.ended_during_window,
    }


def submitter_figures(
    samples: list[dict[str, float]], errors: list[str], compute_s: list[float]
) -> dict[str, Any]:
    done = [sample["done_ms"] for sample in samples]
    compute = [1000 * seconds for seconds in compute_s]
    figures: dict[str, Any] = {
        "errors": len(errors),
        "error_examples": errors[:3],
        "post_to_first_point_ms": percentiles([sample["first_point_ms"] for sample in samples]),
        "post_to_done_ms": percentiles(done),
        "done_over_compute": None,
    }
    if samples and compute:
        figures["done_over_compute"] = round(
            statistics.median(done) / statistics.median(compute), 2
        )
    return figures


def learner_figures(report: Report) -> dict[str, Any]:
    summary = report.summary()
    return {
        "errors": summary["4xx"]
        + summary["5xx"]
        + summary["connection_errors"]
        + summary["streams_without_done"],
        "error_examples": report.connection_errors[:3],
        "lost_points": summary["lost_points"],
        "repeated_points": summary["repeated_points"],
        "points_checked": summary["points_checked"],
        "page_ms": summary["page_ms"],
        "post_ms": summary["post_ms"],
    }
