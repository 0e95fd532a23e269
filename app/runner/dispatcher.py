"""Send attempts to the workers and turn whatever happens to them into a final status.

Every submitted attempt ends: with the worker's record, as `failed` when its worker dies, as
`timed_out` when the watchdog has to stop it, or as `failed` when the server shuts down first.
"""

import logging
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from distributed import Client, Future, LocalCluster
from distributed.scheduler import KilledWorker

from app.config import Settings
from app.models import AttemptStatus
from app.runner.cluster import connect
from app.runner.events import Ended, EventSink, Finished, Points, ReplayDone, Started
from app.runner.pool import PoolKeeper
from app.runner.worker_task import execute_attempt, execute_replay

logger = logging.getLogger(__name__)


class NoWorkers(RuntimeError):
    """The pool has had no worker for longer than the grace period: a run would only wait."""


WORKER_LOST = (
    "The worker process running this attempt died before it finished (killed, crashed or out of "
    "memory). The pool replaced it; run again to retry."
)


@dataclass
class InFlight:
    attempt_id: int
    future: Future[Any]
    submitted_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    worker: str | None = None
    ended: bool = False  # set once this process has decided the attempt's fate


class AttemptRunner:
    def __init__(self, settings: Settings, *, sink: EventSink) -> None:
        self._settings = settings
        self._sink = sink
        # A topic per runner, so several web servers can share one external cluster.
        self._topic = f"drillbook-progress-{uuid.uuid4().hex[:12]}"
        self._lock = threading.Lock()
        self._in_flight: dict[int, InFlight] = {}
        self._replays_in_flight: dict[int, Future[Any]] = {}
        self._stopping = threading.Event()
        self._watchdog = threading.Thread(target=self._watch, name="attempt-watchdog", daemon=True)
        self.client: Client | None = None
        self._cluster: LocalCluster | None = None
        self._pool_keeper: PoolKeeper | None = None
        # Since when (monotonic) the scheduler has known no worker, as last counted by the
        # watchdog: a new run is refused at once when the pool has stayed empty.
        self._empty_since: float | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> None:
        self.client, self._cluster = connect(self._settings)
        self.client.subscribe_topic(self._topic, self._on_progress)
        if self._cluster is not None:
            self._pool_keeper = PoolKeeper(self._cluster, self._settings.workers)
        self._count_workers()
        self._watchdog.start()

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            leftovers = [item for item in self._in_flight.values() if not item.ended]
            for item in leftovers:
                item.ended = True
            replays = dict(self._replays_in_flight)
            self._replays_in_flight.clear()
        for item in leftovers:
            self._sink.put(
                Ended(item.attempt_id, AttemptStatus.failed, "The server stopped during the run.")
            )
            item.future.cancel()
        for replay_id, future in replays.items():
            self._sink.put(ReplayDone(replay_id, None, "The server stopped during the replay."))
            future.cancel()
        if self._watchdog.is_alive():
            self._watchdog.join(timeout=5)
        if self.client is not None:
            self.client.close()
        if self._cluster is not None:
            self._cluster.close()

    # -- dispatch --------------------------------------------------------------------------
    def submit(self, *, attempt_id: int, drill: str, knobs: dict[str, Any], seed: int) -> None:
        self._require_workers()
        future = self._submit(
            f"attempt-{attempt_id}", execute_attempt, attempt_id, self._topic, drill, knobs, seed
        )
        with self._lock:
            self._in_flight[attempt_id] = InFlight(attempt_id, future)
        future.add_done_callback(lambda done: self._on_done(attempt_id, done))

    def _submit(self, name: str, function: Callable[..., Any], *args: Any) -> Future[Any]:
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
        )

    def submit_replay(
        self, *, replay_id: int, drill: str, knobs: dict[str, Any], seed: int
    ) -> None:
        """Run a stored command again. Replays stream nothing: only the record is compared."""
        self._require_workers()
        future = self._submit(f"replay-{replay_id}", execute_replay, drill, knobs, seed)
        with self._lock:
            self._replays_in_flight[replay_id] = future
        future.add_done_callback(lambda done: self._on_replay_done(replay_id, done))

    def _on_replay_done(self, replay_id: int, future: Future[Any]) -> None:
        with self._lock:
            if self._replays_in_flight.pop(replay_id, None) is None:
                return  # already ended by stop()
        if future.status == "finished":
            self._sink.put(ReplayDone(replay_id, future.result()))
            return
        error = future.exception() if future.status == "error" else None
        reason = WORKER_LOST if isinstance(error, KilledWorker) else f"{future.status}: {error}"
        self._sink.put(ReplayDone(replay_id, None, reason))

    # -- the pool --------------------------------------------------------------------------
    def _count_workers(self) -> None:
        assert self.client is not None
        try:
            live = len(self.client.nthreads())
        except Exception:  # the scheduler itself is unreachable: no worker can take a run
            logger.exception("could not count the workers")
            live = 0
        if live:
            self._empty_since = None
        elif self._empty_since is None:
            self._empty_since = time.monotonic()

    def _no_worker_for(self) -> float:
        """Seconds the pool has been without any worker (0 while it has one)."""
        since = self._empty_since
        return 0.0 if since is None else time.monotonic() - since

    def _require_workers(self) -> None:
        grace = self._settings.no_worker_grace_s
        if self._no_worker_for() > grace:
            if self._cluster is not None:
                where = f"0 of the embedded cluster's {self._settings.workers} workers are running"
            else:
                where = f"the scheduler at {self._settings.scheduler_address} has no workers"
            raise NoWorkers(f"no worker has been available for over {grace:g} s ({where})")

    # -- callbacks (Dask threads) ----------------------------------------------------------
    def _on_progress(self, event: tuple[float, dict[str, Any]]) -> None:
        _, message = event
        attempt_id = int(message["attempt"])
        if message["kind"] == "started":
            with self._lock:
                item = self._in_flight.get(attempt_id)
                if item is not None:
                    item.started_at = time.monotonic()
                    item.worker = message["worker"]
            self._sink.put(Started(attempt_id, message["worker"]))
        elif message["kind"] == "points":
            points = [(str(n), int(s), v) for n, s, v in message["points"]]
            self._sink.put(Points(attempt_id, points))

    def _on_done(self, attempt_id: int, future: Future[Any]) -> None:
        with self._lock:
            item = self._in_flight.pop(attempt_id, None)
            if item is None or item.ended:
                return
            item.ended = True
        if future.status == "finished":
            self._sink.put(Finished(attempt_id, future.result()))
            return
        if future.status == "cancelled":
            self._sink.put(Ended(attempt_id, AttemptStatus.failed, "The run was cancelled."))
            return
        error = future.exception()
        if isinstance(error, KilledWorker):
            message = WORKER_LOST
        else:
            message = f"The worker could not run the drill: {type(error).__name__}: {error}"
            logger.error("attempt %s: %s", attempt_id, message)
        self._sink.put(Ended(attempt_id, AttemptStatus.failed, message))

    # -- watchdog --------------------------------------------------------------------------
    def _watch(self) -> None:
        """Backstop for runs the drill's own limit checks cannot stop (stuck inside one op), and
        for attempts no worker ever starts."""
        hard_limit = self._settings.time_limit_s + self._settings.watchdog_grace_s
        queue_limit = self._settings.queue_timeout_s
        while not self._stopping.wait(0.5):
            try:
                self._count_workers()
                if self._pool_keeper is not None and not self._stopping.is_set():
                    self._pool_keeper.check()
            except Exception:  # the watchdog must keep watching whatever the pool does
                logger.exception("could not check the worker pool")
            pool_gone = self._no_worker_for() > self._settings.no_worker_grace_s
            now = time.monotonic()
            with self._lock:
                overdue = [
                    item
                    for item in self._in_flight.values()
                    if not item.ended
                    and item.started_at is not None
                    and now - item.started_at > hard_limit
                ]
                unstarted = [
                    item
                    for item in self._in_flight.values()
                    if not item.ended
                    and item.started_at is None
                    and (now - item.submitted_at > queue_limit or pool_gone)
                ]
                for item in overdue + unstarted:
                    item.ended = True
            for item in overdue:
                self._stop_overdue(item)
            for item in unstarted:
                reason = (
                    f"No worker has been available for over {self._settings.no_worker_grace_s:g}"
                    " s, so nothing could run this attempt; is the cluster running any workers?"
                    if pool_gone
                    else f"No worker started this run within {queue_limit:g} s; the pool was busy"
                    " the whole time."
                )
                self._sink.put(Ended(item.attempt_id, AttemptStatus.failed, reason))
                item.future.cancel()

    def _stop_overdue(self, item: InFlight) -> None:
        limit = self._settings.time_limit_s
        self._sink.put(
            Ended(
                item.attempt_id,
                AttemptStatus.timed_out,
                f"Stopped by the watchdog: the run kept going past its {limit:g} s time limit.",
            )
        )
        item.future.cancel()
        if self.client is not None and item.worker is not None:
            try:
                # The only way to stop Python code stuck in a worker thread is a new process.
                self.client.restart_workers([item.worker], raise_for_error=False)
            except Exception:
                logger.exception("could not restart worker %s", item.worker)
