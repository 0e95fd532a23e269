"""Dask worker preload: warm a worker up before it registers with the scheduler.

A preload runs inside the worker's start-up, before `register-worker` is sent, so the scheduler
never sees (and never hands a run to) a cold worker. A scheduler-registered WorkerPlugin would
instead run after registration, and runs queued to a replacement worker waited out its warm-up
while the other worker sat idle. External workers take it from `python -m app worker`
(`app/runner/dask_commands.py`).
"""

import os
import signal
import threading
from typing import Any

# Training runs yield the CPU to the web process: on a machine that serves pages and trains at
# once, a learner's click must not wait behind a queue of runs (throughput is the same when the
# web process is idle).
WORKER_NICENESS = 10
# "0" turns the spawner's early start off (app.core.config.Settings.sandbox_prewarm): the embedded
# cluster sets it for its workers, an external worker reads it from its own environment.
SANDBOX_PREWARM = "DRILLBOOK_SANDBOX_PREWARM"


def dask_setup(worker: Any) -> None:
    from drills.kit.warmup import warm_up

    os.nice(WORKER_NICENESS)
    # Ctrl-C in a terminal reaches every process of the foreground group. The worker's parent
    # (the web process, or `dask worker`'s nanny) closes it in order; on its own the worker
    # died mid-shutdown with tracebacks (and the nanny started a new one only to close it).
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    warm_up()
    if os.environ.get(SANDBOX_PREWARM, "1") != "0":
        prewarm_sandboxes()


def prewarm_sandboxes() -> None:
    """Start this worker's sandbox spawner in the background: the worker registers at once and
    its first code run finds torch imported. (Where sandboxes cannot start, nothing starts.)"""
    from drills.sandbox.pool import shared_pool

    threading.Thread(target=shared_pool, name="drillbook-sandbox-prewarm", daemon=True).start()
