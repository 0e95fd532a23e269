"""The functions a Dask worker runs: one attempt (a drill's run or an exercise's), or one replay.

An attempt's worker stores its own progress in the database (`progress_store`), so the run
outlives the web process that sent it, and no point travels through the web process or Dask's
event channel. The worker needs the app's code and a route to the database, nothing from the web
server's disk.
"""

from typing import Any

from distributed import get_worker


class RecordNotStored(Exception):
    """The run finished but its worker could not store the record: it travels back to the web
    process that sent it, which stores it. (Only then: a stored run returns nothing, so the
    web process never fetches a result from the worker.)"""

    def __init__(self, record: dict[str, Any]) -> None:
        super().__init__(record)
        self.record = record


def execute_attempt(
    attempt_id: int,
    database_url: str,
    drill: str,
    knobs: dict[str, Any],
    seed: int,
    time_limit_s: float,
    memory_limit_mb: float | None,
) -> None:
    """Run the attempt and store it; raise RecordNotStored when the database would not take the
    final record."""
    # Imported on the worker only: the web process that submits this function never loads torch.
    from app.runner.progress_store import ProgressStore
    from drills.core.limits import Limits
    from drills.core.runner import run_drill

    store = ProgressStore(database_url, attempt_id)
    if not store.claim(get_worker().address):
        return  # ended (e.g. cancelled) before a worker was free: nothing to run
    limits = Limits(
        time_limit_s=time_limit_s,
        memory_limit_mb=memory_limit_mb,
        stop_requested=store.cancel_requested.is_set,
    )
    with store.heartbeat():
        record = run_drill(drill, knobs, seed, emit=store.add_points, limits=limits)
    try:
        store.finish(record)
    except Exception as error:
        raise RecordNotStored(record) from error


SANDBOX_SHARE = 0.75  # of an exercise run's time limit, for the learner's code in the sandbox


def execute_exercise(
    attempt_id: int,
    database_url: str,
    exercise: str,
    code: str,
    seed: int,
    time_limit_s: float,
    memory_limit_mb: float | None,
) -> None:
    """Judge an exercise's code and store the run, as execute_attempt does for a drill. The code
    never runs in this process (it holds the database's credentials): the judge sends it to a
    sandbox (drills.sandbox) and decides here, from what came back, without running any of it.
    The memory limit is the sandbox's own (its address-space limit), not this worker's.

    The sandbox stops the code itself after three quarters of the time limit: the rest is for
    starting a sandbox (a cold one imports torch, 3-5 s) and for the judging after it, so the
    watchdog, which restarts a worker whose run outlives the limit, never has to."""
    from app.runner.progress_store import ProgressStore
    from drills.exercises.record import run_exercise
    from drills.exercises.registry import get_exercise
    from drills.sandbox.pool import shared_pool

    store = ProgressStore(database_url, attempt_id)
    if not store.claim(get_worker().address):
        return
    with store.heartbeat():
        record = run_exercise(
            get_exercise(exercise),
            code,
            seed,
            emit=store.add_points,
            wall_s=max(1.0, SANDBOX_SHARE * time_limit_s),
            pool=shared_pool(),
        )
    try:
        store.finish(record)
    except Exception as error:
        raise RecordNotStored(record) from error


def execute_replay(
    drill: str,
    knobs: dict[str, Any],
    seed: int,
    time_limit_s: float,
    memory_limit_mb: float | None,
) -> dict[str, Any]:
    """Run a stored command again; nothing streams, only the final record matters."""
    from drills.core.limits import Limits
    from drills.core.runner import run_drill

    limits = Limits(time_limit_s=time_limit_s, memory_limit_mb=memory_limit_mb)
    return run_drill(drill, knobs, seed, limits=limits)
