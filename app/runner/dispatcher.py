"""Send attempts and replays to the workers, and say when one of them could not finish.

An attempt's worker stores its own progress and record (`worker_task`), and the task is sent
fire-and-forget: it runs to its end even if this web process dies meanwhile. This process only
watches its own sends for a quick verdict on failures it hears of first (a worker killed under a
run, a task that could not start). Whatever it does not hear of (a run sent by a process that
died, a stuck run, a queue that never moved) is the housekeeping's (`app.runs.housekeeping`), which
reads the database and the scheduler, not this process's memory.
"""

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from distributed import Client, Future, LocalCluster, fire_and_forget
from distributed.scheduler import KilledWorker

from app.core.config import Settings
from app.runner.cluster import connect
from app.runner.events import Ended, EventSink, Finished, ReplayDone
from app.runner.pool import PoolKeeper
from app.runner.worker_task import (
    RecordNotStored,
    execute_attempt,
    execute_exercise,
    execute_replay,
)
from app.runs.models import AttemptStatus

logger = logging.getLogger(__name__)


class NoWorkers(RuntimeError):
    """The pool has had no worker for longer than the grace period: a run would only wait."""


WORKER_LOST = (
    "The worker process running this attempt died before it finished (killed, crashed or out of "
    "memory). The pool replaced it; run again to retry."
)
# How often an attempt whose worker died before it started is sent again (app.runner.events.
# Ended.resend); a worker that dies before every start is not waited out for ever.
MAX_RESENDS = 3


@dataclass(frozen=True)
class Sent:
    """What an attempt was sent with, to send it again: the worker function (a drill's run or
    an exercise's judging) and its arguments after the attempt id and the database's URL."""

    task: Callable[..., None]
    args: tuple[Any, ...]
    priority: int
    resends: int = 0


class AttemptRunner:
    def __init__(self, settings: Settings, *, sink: EventSink) -> None:
        self._settings = settings
        self._sink = sink
        self._lock = threading.Lock()
        # This process's sends, kept until done: a dropped Future would take its callback along.
        self._attempts: dict[int, Future[Any]] = {}
        self._sent: dict[int, Sent] = {}
        self._replays: dict[int, Future[Any]] = {}
        self._stopping = threading.Event()
        self._watcher = threading.Thread(target=self._watch, name="pool-watcher", daemon=True)
        self.client: Client | None = None
        self._cluster: LocalCluster | None = None
        self._pool_keeper: PoolKeeper | None = None
        # Since when (monotonic) the scheduler has known no worker, as last counted: a new run
        # is refused at once when the pool has stayed empty.
        self._empty_since: float | None = None
        self._scheduler_id: str | None = None
        self._live_workers = 0

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        self.client, self._cluster = connect(self._settings)
        if self._cluster is not None:
            self._pool_keeper = PoolKeeper(
                self._cluster,
                self._settings.workers,
                start_grace_s=self._settings.worker_start_grace_s,
            )
        self._count_workers()
        self._watcher.start()

    @property
    def embedded(self) -> bool:
        """True when this process owns the cluster: its runs end when the process does."""
        return self._cluster is not None

    @property
    def scheduler_id(self) -> str:
        """The scheduler's identity, as last asked (every half second): a restarted scheduler has
        a new one, and none of the old one's tasks."""
        if self._scheduler_id is None:
            raise RuntimeError("the runner is not started")
        return self._scheduler_id

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            attempts, self._attempts = self._attempts, {}
            self._sent = {}
            replays, self._replays = self._replays, {}
        if self.embedded:
            # The workers go with this process: its runs cannot finish.
            for attempt_id in attempts:
                self._sink.put(
                    Ended(attempt_id, AttemptStatus.failed, "The server stopped during the run.")
                )
        # A replay's record comes back through this process, so it cannot outlive it.
        for replay_id in replays:
            self._sink.put(ReplayDone(replay_id, None, "The server stopped during the replay."))
        if self._watcher.is_alive():
            self._watcher.join(timeout=5)
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    # -- dispatch --------------------------------------------------------------------------
    @property
    def runs_per_learner(self) -> int:
        """How many runs one learner may have queued or running at once (app/runs/fair_share.py)."""
        return self._settings.runs_per_learner

    @property
    def share_window_s(self) -> float:
        """The window a learner's share of the workers is counted over (app/runs/fair_share.py)."""
        return self._settings.share_window_s

    def submit(
        self, *, attempt_id: int, drill: str, knobs: dict[str, Any], seed: int, priority: int = 0
    ) -> None:
        """Send an attempt; a higher `priority` starts first, equal ones in the order sent."""
        self._send(attempt_id, Sent(execute_attempt, (drill, knobs, seed), priority))

    def submit_exercise(
        self, *, attempt_id: int, exercise: str, code: str, seed: int, priority: int = 0
    ) -> None:
        """Send an exercise's run: its worker judges the code in a sandbox (app/exercises)."""
        self._send(attempt_id, Sent(execute_exercise, (exercise, code, seed), priority))

    def _send(self, attempt_id: int, sent: Sent) -> None:
        self._require_workers()
        future = self._submit(
            f"attempt-{attempt_id}",
            sent.task,
            attempt_id,
            self._settings.worker_database_url or self._settings.database_url,
            *sent.args,
            priority=sent.priority,
        )
        # Runs to its end on the cluster even if this process (its only client) goes away.
        fire_and_forget(future)
        with self._lock:
            self._attempts[attempt_id] = future
            self._sent[attempt_id] = sent
        future.add_done_callback(lambda done: self._on_attempt_done(attempt_id, done))

    def _submit(
        self, name: str, function: Callable[..., Any], *args: Any, priority: int = 0
    ) -> Future[Any]:
        """One job on the cluster, with this server's limits as its last two arguments. The
        key is unique, so a restarted server never collides with a stale job of the same id."""
        if self.client is None:
            raise RuntimeError("the runner is not started")
        return self.client.submit(
            function,
            *args,
            self._settings.time_limit_s,
            self._settings.memory_limit_mb,
            key=f"{name}-{uuid.uuid4().hex[:8]}",
            pure=False,
            priority=priority,
        )

    def submit_replay(
        self, *, replay_id: int, drill: str, knobs: dict[str, Any], seed: int
    ) -> None:
        """Run a stored command again. Replays stream nothing: only the record is compared."""
        self._require_workers()
        future = self._submit(f"replay-{replay_id}", execute_replay, drill, knobs, seed)
        with self._lock:
            self._replays[replay_id] = future
        future.add_done_callback(lambda done: self._on_replay_done(replay_id, done))

    def restart_worker(self, address: str) -> None:
        """Replace a worker process: the only way to stop Python code stuck inside one op."""
        if self.client is None:
            return
        try:
            self.client.restart_workers([address], raise_for_error=False)
        except Exception:
            logger.exception("could not restart worker %s", address)

    # -- the pool --------------------------------------------------------------------------
    def _count_workers(self) -> None:
        """Count the workers; note the scheduler's identity."""
        assert self.client is not None
        try:
            # One round trip; n_workers=0 leaves out the (long) per-worker details.
            identity = self.client.scheduler_info(n_workers=0)
            live = int(identity["n_workers"])
            self._scheduler_id = str(identity["id"])
        except Exception:  # the scheduler itself is unreachable: no worker can take a run
            logger.exception("could not count the workers")
            live = 0
        self._live_workers = live
        if live:
            self._empty_since = None
        elif self._empty_since is None:
            self._empty_since = time.monotonic()

    @property
    def live_workers(self) -> int:
        """The workers the scheduler knows of, as last counted (every half second)."""
        return self._live_workers

    def no_worker_for(self) -> float:
        """Seconds the pool has been without any worker (0 while it has one)."""
        since = self._empty_since
        return 0.0 if since is None else time.monotonic() - since

    def _require_workers(self) -> None:
        grace = self._settings.no_worker_grace_s
        if self.no_worker_for() > grace:
            if self._cluster is not None:
                where = f"0 of the embedded cluster's {self._settings.workers} workers are running"
            else:
                where = f"the scheduler at {self._settings.scheduler_address} has no workers"
            raise NoWorkers(f"no worker has been available for over {grace:g} s ({where})")

    def _watch(self) -> None:
        while not self._stopping.wait(0.5):
            try:
                self._count_workers()
                if self._pool_keeper is not None and not self._stopping.is_set():
                    self._pool_keeper.check()
            except Exception:  # the watcher must keep watching whatever the pool does
                logger.exception("could not check the worker pool")

    # -- callbacks (Dask threads) ----------------------------------------------------------
    def _on_attempt_done(self, attempt_id: int, future: Future[Any]) -> None:
        with self._lock:
            sent = self._sent.pop(attempt_id, None)
            if self._attempts.pop(attempt_id, None) is None:
                return  # already handled by stop()
        if future.status == "finished":
            return  # its worker stored it
        if future.status == "cancelled":
            # Nobody cancels an attempt's future (a learner's cancel goes through the database):
            # this process lost the scheduler. The task may still run (a brief drop) or be gone
            # with its scheduler; the housekeeping tells which, from the scheduler's identity
            # and the run's heartbeat.
            logger.info("attempt %s: lost sight of its task (%s)", attempt_id, future.key)
            return
        error = future.exception()
        if isinstance(error, RecordNotStored):  # the worker could not reach the database
            self._sink.put(Finished(attempt_id, error.record))
            return
        resend = None
        if isinstance(error, KilledWorker) and sent is not None and sent.resends < MAX_RESENDS:
            again = replace(sent, resends=sent.resends + 1)
            resend = partial(self._send, attempt_id, again)
        failure = _failure(attempt_id, future)
        self._sink.put(Ended(attempt_id, AttemptStatus.failed, failure, resend=resend))

    def _on_replay_done(self, replay_id: int, future: Future[Any]) -> None:
        with self._lock:
            if self._replays.pop(replay_id, None) is None:
                return  # already ended by stop()
        if future.status == "finished":
            self._sink.put(ReplayDone(replay_id, future.result()))
        elif future.status == "cancelled":
            self._sink.put(ReplayDone(replay_id, None, "The replay was cancelled."))
        else:
            self._sink.put(ReplayDone(replay_id, None, _failure(replay_id, future)))


def _failure(job_id: int, future: Future[Any]) -> str:
    error = future.exception()
    if isinstance(error, KilledWorker):
        return WORKER_LOST
    message = f"The worker could not run the drill: {type(error).__name__}: {error}"
    logger.error("%s: %s", future.key, message)
    return message
