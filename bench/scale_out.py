"""Benchmark of the "scale out" issue: for each setting, CPU per run of each process kind,
throughput against the compute limit, latency at low load, and a class in the scale-out set-up.

    python -m bench.scale_out --setups embedded --workers 2 --submitters 8 --seconds 60
    python -m bench.scale_out --setups embedded scale-out --workers 1 2 4 --web-processes 1 2 \\
        --submitters 1 8 --learners 50 --seconds 60 --json results.json

For each setup x workers x web processes (the embedded set-up has one) it starts a deployment
(support/deployments.py), warms it up with one run per worker, then measures each load in turn:
`--submitters N` (closed loop: post, follow to `done`, post again; no pages; `--pause S`: a
random pause of up to S seconds before each post) and
`--learners N` (bench/class_load.py's simulated class). Around each load's window it reads the
CPU time of every process by role (web, worker, scheduler, and in the scale-out set-up the local
PostgreSQL server; support/process_cpu.py) and its own (the clients'), and divides each by the runs
completed in the window; from the database it reads the window's queue waits and compute times.
The compute limit is workers / median compute time. `--worker-cores N` gives the workers cores of
their own (bench/cores.py). Everything started is stopped at the end, on errors and Ctrl-C too.
Not a test: the figures go to the README.
"""

import argparse
import json
import os
import signal
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any

from bench import database_figures
from bench.cores import workers_on_own_cores
from bench.scale_out_figures import (
    cpu_figures,
    learner_figures,
    submitter_figures,
    throughput_figures,
)
from bench.scale_out_table import print_table
from bench.submitters import register_submitters, submit_until
from support.classroom import (
    ARRIVALS_S,
    Report,
    check_points,
    percentiles,
    register_class,
    teach,
)
from support.deployments import Deployment, embedded, scale_out
from support.process_cpu import measure_cpu

DRILL = "overfit-one-batch"  # 200 steps, its default: the runs the README's figures are about
CALIBRATION_RUNS = 7  # sequential runs that give the drill's compute time alone


@dataclass(frozen=True)
class Load:
    kind: str  # "submitters" or "learners"
    clients: int

    def __str__(self) -> str:
        return f"{self.clients} {self.kind}"


def deployment_for(
    setup: str, workers: int, web_processes: int
) -> AbstractContextManager[Deployment]:
    if setup == "embedded":
        return embedded(workers=workers)
    return scale_out(workers=workers, web_processes=web_processes)


def settings(args: argparse.Namespace) -> Iterator[tuple[str, int, int]]:
    for setup in args.setups:
        for workers in args.workers:
            # The embedded set-up is one web process by design (its workers are its children).
            for web_processes in [1] if setup == "embedded" else args.web_processes:
                yield setup, workers, web_processes


def warm_up(deployment: Deployment) -> float:
    """One run per worker (and per web process): first requests, first job of each worker. Then
    the drill's compute time alone (median of a few runs one after the other, nothing else
    running): the compute limit divides by it. Under load a run's own compute time grows (the
    workers share the cores with everything else), and a limit from that would move with the
    load it is meant to judge."""
    sessions = register_submitters(
        deployment.urls, max(deployment.workers, deployment.web_processes)
    )
    warm = submit_until(sessions, 0)
    before = database_figures.last_attempt_id(deployment.database_url)
    alone = [submit_until(sessions[:1], 0) for _ in range(CALIBRATION_RUNS)]
    errors = warm.errors + [error for runs in alone for error in runs.errors]
    if errors:
        raise RuntimeError(f"the warm-up runs failed: {errors[:3]}")
    return statistics.median(
        database_figures.attempts_after(deployment.database_url, before).compute_s
    )


def measure(
    deployment: Deployment,
    load: Load,
    seconds: float,
    compute_alone_s: float,
    *,
    think_s: float,
    arrive_over_s: float,
    pause_s: float = 0.0,
) -> dict[str, Any]:
    """One window of one load; the row of the table."""
    load_average = os.getloadavg()[0]
    if load.kind == "submitters":
        sessions = register_submitters(deployment.urls, load.clients)
    else:
        report = Report(learners=load.clients, seconds=seconds, arrive_over_s=arrive_over_s)
        class_list = register_class(deployment.urls, report, drill=DRILL, think_s=think_s)
    before = database_figures.last_attempt_id(deployment.database_url)
    cpu_window = measure_cpu(deployment.process_roles)
    # The clients run on the same cores as what they measure: what they cost is shown too.
    client_cpu_before = time.process_time()
    started = time.monotonic()
    if load.kind == "submitters":
        runs = submit_until(sessions, seconds, pause_s=pause_s)
    else:
        teach(class_list, seconds, arrive_over_s=arrive_over_s)
    window_s = time.monotonic() - started
    cpu = cpu_window()
    client_cpu_s = time.process_time() - client_cpu_before
    row: dict[str, Any] = {
        "setup": deployment.kind,
        "workers": deployment.workers,
        "web_processes": deployment.web_processes,
        "load": str(load),
        "window_s": round(window_s, 1),
        "load_average_before": round(load_average, 2),
    }
    if load.kind == "submitters":
        completed = len(runs.samples)
    else:
        check_points(report, deployment.database_url)
        completed = report.runs_completed
        row |= learner_figures(report)
    attempts = database_figures.attempts_after(deployment.database_url, before)
    if load.kind == "submitters":
        row |= submitter_figures(runs.samples, runs.errors, attempts.compute_s)
    row |= throughput_figures(
        completed, window_s, deployment.workers, compute_alone_s, attempts.compute_s
    )
    row |= cpu_figures(cpu, completed)
    row["client_cpu_ms_per_run"] = round(1000 * client_cpu_s / completed, 1) if completed else None
    # This machine's speed drifts from one minute to the next (the same run's worker CPU moved
    # by a third): the web process's CPU against the workers' in the same window does not.
    if completed and cpu.seconds.get("worker"):
        row["web_over_worker_cpu"] = round(cpu.seconds["web"] / cpu.seconds["worker"], 3)
    row["final_statuses"] = attempts.statuses
    row["queue_wait_s"] = percentiles(attempts.queue_wait_s)
    row["storage"] = database_figures.storage_per_attempt(deployment.database_url)
    return row


def stop_on_sigterm() -> None:
    """SIGTERM unwinds like Ctrl-C, so every `with` block stops what it started."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, interrupt)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.scale_out")
    parser.add_argument(
        "--setups", nargs="+", choices=["embedded", "scale-out"], default=["embedded"]
    )
    parser.add_argument("--workers", type=int, nargs="+", default=[2])
    parser.add_argument(
        "--web-processes", type=int, nargs="+", default=[1], help="scale-out set-up only"
    )
    parser.add_argument(
        "--submitters",
        type=int,
        nargs="*",
        default=[8],
        help="closed-loop submitters per window, one window each (none: `--submitters`)",
    )
    parser.add_argument(
        "--learners", type=int, nargs="*", default=[], help="simulated classes (class_load)"
    )
    parser.add_argument("--seconds", type=float, default=60, help="each load's window")
    parser.add_argument("--think", type=float, default=2.0, help="learners' mean pause (s)")
    parser.add_argument(
        "--pause",
        type=float,
        default=0.0,
        help="submitters: a random pause in [0, PAUSE) s before each run (the low-load latency)",
    )
    parser.add_argument(
        "--arrive-over",
        type=float,
        default=ARRIVALS_S,
        help="learners arrive one after another over this many seconds (0: all at once)",
    )
    parser.add_argument(
        "--worker-cores",
        type=int,
        help="give the workers this many cores of their own, everything else the rest "
        "(worker hosts on one machine; bench/cores.py)",
    )
    parser.add_argument("--json", metavar="FILE", help="also write every row as JSON ('-': stdout)")
    args = parser.parse_args()
    loads = [Load("submitters", n) for n in args.submitters] + [
        Load("learners", n) for n in args.learners
    ]
    stop_on_sigterm()
    rows: list[dict[str, Any]] = []
    try:
        for setup, workers, web_processes in settings(args):
            print(
                f"starting {setup}: {workers} worker(s), {web_processes} web process(es)",
                file=sys.stderr,
            )
            with (
                deployment_for(setup, workers, web_processes) as deployment,
                workers_on_own_cores(deployment, args.worker_cores),
            ):
                compute_alone_s = warm_up(deployment)
                for load in loads:
                    print(f"  measuring {load} for {args.seconds:g} s", file=sys.stderr)
                    rows.append(
                        measure(
                            deployment,
                            load,
                            args.seconds,
                            compute_alone_s,
                            think_s=args.think,
                            arrive_over_s=args.arrive_over,
                            pause_s=args.pause,
                        )
                        | {"worker_cores": args.worker_cores}
                    )
                    print_table(rows[-1:], header=len(rows) == 1)
    finally:
        if args.json:
            text = json.dumps(rows, indent=2)
            if args.json == "-":
                print(text)
            else:
                with open(args.json, "w") as output:
                    output.write(text + "\n")
    if rows:
        print()
        print_table(rows, header=True)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        # The `with` blocks have stopped every process by now.
        sys.exit("interrupted: every process the benchmark started is stopped")
