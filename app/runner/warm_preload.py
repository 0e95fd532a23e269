"""Dask worker preload: warm a worker up before it registers with the scheduler.

A preload runs inside the worker's start-up, before `register-worker` is sent, so the scheduler
never sees (and never hands a run to) a cold worker. A scheduler-registered WorkerPlugin would
instead run after registration, and runs queued to a replacement worker waited out its warm-up
while the other worker sat idle. External workers take it with
`dask worker --preload app.runner.warm_preload`.
"""

from typing import Any


def dask_setup(worker: Any) -> None:
    from drills.warmup import warm_up

    warm_up()
