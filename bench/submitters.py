"""Closed-loop submitters: each posts a run (overfit-one-batch, 200 steps), follows its event
stream to `done`, and posts the next at once (or after a random pause, `pause_s`): no pages;
what a browser asks of the server for one run, nothing more (compute times are read from the
database afterwards). The load of the issue's "8 submitters"; with 1 submitter and a pause, the
latency at low load.

Submitter i uses web process i mod n (a load balancer that keeps a browser on one process); the
stream's points come from the database either way (the worker writes them, any web process
streams them).
"""

import itertools
import os
import random
import threading
import time
import urllib.error
from dataclasses import dataclass, field

from bench.submit_latency import post_attempt
from support.learner import Session, follow

PASSWORD = "submitter-password"


@dataclass
class SubmitterRuns:
    samples: list[dict[str, float]] = field(default_factory=list)  # one_run's, per finished run
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)


def register_submitters(urls: list[str], submitters: int) -> list[Session]:
    """One new account per submitter (registration hashes a password: done before any clock)."""
    first = next(_accounts_made)
    for _ in range(submitters - 1):
        next(_accounts_made)
    return [
        Session.registered(urls[i % len(urls)], f"submitter-{first + i}-{os.getpid()}", PASSWORD)
        for i in range(submitters)
    ]


_accounts_made = itertools.count()


def stream_one_run(session: Session, seed: int) -> dict[str, float]:
    """POST a run and follow its stream to `done` (which carries the final status)."""
    started = time.perf_counter()
    created = post_attempt(session, seed)
    log = follow(session, created["urls"]["events"], timeout=120)
    if log.done_at is None:
        raise RuntimeError(f"attempt {created['id']}: the stream ended without `done`")
    status = log.events[-1][1]
    if status != "succeeded":
        raise RuntimeError(f"attempt {created['id']} ended {status}")
    return {
        "attempt_id": created["id"],
        "first_point_ms": 1000 * ((log.first_point_at or log.done_at) - started),
        "done_ms": 1000 * (log.done_at - started),
    }


def submit_until(
    sessions: list[Session], seconds: float, *, first_seed: int = 0, pause_s: float = 0.0
) -> SubmitterRuns:
    """Every session submits in a loop until `seconds` are up, at least once (seconds=0: one
    run each, a warm-up); a run under way then is followed to its end and counted (the
    caller's window includes it). `pause_s`: before each run, a pause drawn evenly from
    [0, pause_s). Without one, a lone submitter posts the moment its `done` arrives, so its runs
    keep step with the SQLite change feed's 0.1 s looks, and each POST -> done comes out a
    whole number of looks (200 or 300 ms for a 180 ms drill): a learner clicks at any moment."""
    runs = SubmitterRuns()
    deadline = time.monotonic() + seconds

    def submitter(index: int, session: Session) -> None:
        seed = first_seed + 100_000 * index
        pauses = random.Random(seed)
        while True:
            if pause_s:
                time.sleep(pauses.uniform(0, pause_s))
            try:
                sample = stream_one_run(session, seed)
            except (OSError, urllib.error.URLError, RuntimeError, KeyError) as error:
                with runs.lock:
                    runs.errors.append(f"{type(error).__name__}: {error}")
                time.sleep(0.5)  # a failing server is not hammered
            else:
                with runs.lock:
                    runs.samples.append(sample)
            seed += 1
            if time.monotonic() >= deadline:
                return

    threads = [
        threading.Thread(target=submitter, args=(i, session), name=f"submitter-{i}", daemon=True)
        for i, session in enumerate(sessions)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return runs
