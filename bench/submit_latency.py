"""Benchmark a running Drillbook server: latency of one run, and runs per minute under load.

    python -m bench.submit_latency --username NAME --password PW [--url http://127.0.0.1:8000]
                                   [--runs 10] [--submitters 1 2 4]

(register the account at /register first.)

Latency: POST an attempt, follow its event stream, and time the first streamed metric point
(stored before it is sent) and the `done` event, next to the drill's own compute time. Throughput:
N submitters each POST and wait for completion in a loop for --seconds; completed runs per minute.
Only talks to the URL given (meant for 127.0.0.1). Not a test: numbers go to the README.
"""

import argparse
import json
import statistics
import threading
import time
from typing import Any

from support.learner import Session, follow

BODY = {
    "drill": "overfit-one-batch",
    "hypothesis": "fits",
    "prediction": "benchmark run",
    "knobs": {"steps": 200},
}


def post_attempt(session: Session, seed: int) -> dict[str, Any]:
    with session.open("/api/attempts", BODY | {"seed": seed}) as response:
        created: dict[str, Any] = json.load(response)
        return created


def follow_times(session: Session, events_path: str) -> tuple[float | None, float]:
    """Return (time of the first points event, time of done), both time.perf_counter()."""
    log = follow(session, events_path, timeout=120)
    if log.done_at is None:
        raise RuntimeError("stream ended without a done event")
    return log.first_point_at, log.done_at


def one_run(session: Session, seed: int) -> dict[str, float]:
    started = time.perf_counter()
    created = post_attempt(session, seed)
    first_point, done = follow_times(session, created["urls"]["events"])
    with session.open(created["urls"]["self"]) as response:
        attempt = json.load(response)
    if attempt["status"] != "succeeded":
        raise RuntimeError(f"attempt {attempt['id']} ended {attempt['status']}: {attempt['error']}")
    return {
        "first_point_ms": 1000 * ((first_point or done) - started),
        "done_ms": 1000 * (done - started),
        "compute_ms": 1000 * attempt["compute_s"],
    }


def latency(session: Session, runs: int) -> None:
    one_run(session, 0)  # warm the path once (first request, first job on each worker)
    samples = [one_run(session, seed) for seed in range(1, runs + 1)]
    print(
        f"latency over {runs} sequential runs of overfit-one-batch (200 steps), median [min-max]:"
    )
    for key in ("first_point_ms", "done_ms", "compute_ms"):
        values = [sample[key] for sample in samples]
        print(
            f"  {key:15s} {statistics.median(values):8.1f}  [{min(values):.1f}-{max(values):.1f}]"
        )
    overhead = [s["done_ms"] - s["compute_ms"] for s in samples]
    print(f"  {'overhead_ms':15s} {statistics.median(overhead):8.1f}  (done - compute)")


def throughput(session: Session, submitters: int, seconds: float) -> None:
    completed: list[float] = []
    lock = threading.Lock()
    deadline = time.perf_counter() + seconds

    def submitter(index: int) -> None:
        seed = 1000 * index
        while time.perf_counter() < deadline:
            one_run(session, seed)
            seed += 1
            with lock:
                completed.append(time.perf_counter())

    started = time.perf_counter()
    threads = [threading.Thread(target=submitter, args=(i,)) for i in range(submitters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    print(
        f"  {submitters} submitter(s): {len(completed)} runs in {elapsed:.1f} s"
        f" = {60 * len(completed) / elapsed:.0f} runs/min"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.submit_latency")
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--username", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--submitters", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--seconds", type=float, default=20.0)
    args = parser.parse_args()
    session = Session.logged_in(args.url, args.username, args.password)
    latency(session, args.runs)
    print(f"throughput, {args.seconds:g} s per setting:")
    for submitters in args.submitters:
        throughput(session, submitters, args.seconds)


if __name__ == "__main__":
    main()
