"""What sharing cores costs a run by itself, with no Drillbook process in the way: the drill
run in one process, then in as many processes as there are cores, then in N, all at once, each
timing its own runs' CPU.

    python -m bench.core_sharing --processes 4 --runs 8

The scale-out benchmark counts the cores as the workers' alone; with more runs than cores, each
run's CPU time grows beyond the time-slicing itself (caches and memory bandwidth shared, a run
cut off and resumed). This measures that growth on the machine at hand, for the drill the
benchmark runs, so the benchmark's rows can be read against it. Not a test.
"""

import argparse
import multiprocessing
import os
import statistics
import time

DRILL = "overfit-one-batch"


def cpu_ms_per_run(runs: int, first_seed: int) -> list[float]:
    from drills import run_drill

    run_drill(DRILL, {}, first_seed)  # imports and first-call costs out of the figures
    spent = []
    for seed in range(first_seed, first_seed + runs):
        started = time.process_time()
        run_drill(DRILL, {}, seed)
        spent.append(1000 * (time.process_time() - started))
    return spent


def _one_process(arguments: tuple[int, int]) -> list[float]:
    return cpu_ms_per_run(*arguments)


def at_once(processes: int, runs: int) -> list[list[float]]:
    """Each process's CPU ms per run, all processes running at the same time."""
    # spawn: a fresh interpreter each, as a Dask worker is (no torch state forked from here).
    with multiprocessing.get_context("spawn").Pool(processes) as pool:
        return pool.map(_one_process, [(runs, 1000 * i) for i in range(processes)])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.core_sharing", description=__doc__)
    parser.add_argument("--processes", type=int, default=4)
    parser.add_argument("--runs", type=int, default=8, help="runs per process")
    args = parser.parse_args(argv)
    medians = {}
    for processes in sorted({1, os.cpu_count() or 1, args.processes}):
        medians[processes] = [statistics.median(each) for each in at_once(processes, args.runs)]
        shared = statistics.median(medians[processes])
        print(
            f"{processes} process(es) at once: median CPU ms per run "
            + ", ".join(f"{median:.0f}" for median in medians[processes])
            + f"; {shared / medians[1][0]:.2f} x one alone"
        )


if __name__ == "__main__":
    main()
