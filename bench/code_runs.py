"""Code runs against knob runs of the same drill: what the sandbox costs a learner.

    python -m bench.code_runs [--runs 8] [--submitters 1 8] [--seconds 60]

Starts its own server (the embedded default: SQLite, two workers). Latency, one submitter: POST
→ first streamed point and POST → `done`, for an exercise run (the reference solution of
overfit-shuffled-pairs: three hidden batches of 100 steps) and for a knob run of its drill with
the same training (overfit-one-batch, 300 steps). Each worker starts its sandbox spawner (torch
imported) as it starts; the first code run on each worker, right after the server is up, may
still wait for it, so those two are reported apart ("first").
Throughput: N submitters each post code runs back to back for --seconds; code runs per second
against the compute limit (workers / the drill's own compute time of the same training). Not a
test: the figures go to the README.
"""

import argparse
import json
import statistics
import threading
import time
from typing import Any

from drills.exercises.registry import get_exercise
from support.classroom import PASSWORD
from support.learner import Session, follow
from support.server import started_server

EXERCISE = "overfit-shuffled-pairs"
KNOB_RUN = {
    "drill": "overfit-one-batch",
    "hypothesis": "fits",
    "prediction": "benchmark run",
    "knobs": {"steps": 300, "bug": "none"},
}


def timed(session: Session, path: str, body: dict[str, Any]) -> dict[str, float]:
    started = time.perf_counter()
    created = session.post_json(path, body)
    log = follow(session, created["urls"]["events"], timeout=180)
    if log.done_at is None:
        raise RuntimeError("stream ended without a done event")
    record = session.get_json(created["urls"]["self"])
    if record["status"] != "succeeded":
        raise RuntimeError(f"run {record['id']} ended {record['status']}: {record['error']}")
    return {
        "first_point_s": (log.first_point_at or log.done_at) - started,
        "done_s": log.done_at - started,
        "compute_s": record.get("compute_s") or 0.0,
    }


def p50(rows: list[dict[str, float]], key: str) -> float:
    return round(statistics.median(row[key] for row in rows), 3)


def latency(session: Session, runs: int) -> dict[str, Any]:
    code = {"code": get_exercise(EXERCISE).solution}
    code_path = f"/api/exercises/{EXERCISE}/runs"
    first = [timed(session, code_path, code) for _ in range(2)]  # one per worker
    warm, knob = [], []
    for seed in range(runs):
        # Back to back: a spawner serves the next run as soon as the last one's processes are
        # gone, with nothing to re-import.
        warm.append(timed(session, code_path, code))
        knob.append(timed(session, "/api/attempts", KNOB_RUN | {"seed": seed}))
    return {
        "code_first": {
            "first_point_s": p50(first, "first_point_s"),
            "done_s": p50(first, "done_s"),
        },
        "code_warm": {"first_point_s": p50(warm, "first_point_s"), "done_s": p50(warm, "done_s")},
        "knob": {"first_point_s": p50(knob, "first_point_s"), "done_s": p50(knob, "done_s")},
        "overhead_p50_s": round(p50(warm, "done_s") - p50(knob, "done_s"), 3),
        "knob_compute_s": p50(knob, "compute_s"),
    }


def throughput(url: str, submitters: int, seconds: float) -> float:
    code = {"code": get_exercise(EXERCISE).solution}
    done = [0]
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def submit(index: int) -> None:
        session = Session.registered(url, f"submitter-{submitters}-{index}", PASSWORD)
        while time.monotonic() < deadline:
            timed(session, f"/api/exercises/{EXERCISE}/runs", code)
            with lock:
                done[0] += 1

    threads = [threading.Thread(target=submit, args=(i,)) for i in range(submitters)]
    started = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return done[0] / (time.monotonic() - started)


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.code_runs")
    parser.add_argument("--runs", type=int, default=8)
    parser.add_argument("--submitters", type=int, nargs="+", default=[1, 8])
    parser.add_argument("--seconds", type=float, default=60)
    args = parser.parse_args()
    with started_server() as server:
        session = Session.registered(server.url, "bench-latency", PASSWORD)
        result: dict[str, Any] = {"latency": latency(session, args.runs)}
        # The compute limit: two workers over the same training's compute time as a knob run.
        limit = 2 / result["latency"]["knob_compute_s"]
        result["compute_limit_runs_per_s"] = round(limit, 3)
        result["throughput_runs_per_s"] = {}
        for n in args.submitters:
            rate = throughput(server.url, n, args.seconds)
            result["throughput_runs_per_s"][str(n)] = {
                "runs_per_s": round(rate, 3),
                "of_the_limit": round(rate / limit, 2),
            }
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
