"""Spawners started ahead of time, with torch already imported: a cold sandbox costs 4-5 s of
CPU here (bwrap itself 40-90 ms), a run forked from a spawner about 50 ms more than the run.

Each run is a fresh sandbox forked from a spawner (spawner.py) and ends with the run, so nothing
of one learner's run can reach the next; the spawner goes back to the pool for the next run, and
is replaced once it has served its share or died. One long-lived thread starts them all, because
--die-with-parent kills a sandbox when the thread that started it ends. Each spawner holds ~510
MiB of resident memory (torch), which its children share until they write to it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from drills.sandbox.availability import available
from drills.sandbox.limits import DEFAULT_LIMITS, Limits
from drills.sandbox.process import STARTUP_S, StartFailed
from drills.sandbox.spawner import Spawner, start_spawner

# After a failed start the pool waits before trying again: 2 s, 4 s, ... up to a minute.
RETRY_MAX_S = 60.0


class WarmPool:
    """Keeps `size` spawners started with `preload` imported, each serving one run at a time.
    Thread-safe. close() kills the waiting ones."""

    def __init__(
        self,
        size: int = 1,
        *,
        limits: Limits = DEFAULT_LIMITS,
        preload: tuple[str, ...] = ("torch",),
    ) -> None:
        self.size = size
        self.limits = limits
        self.preload = preload
        # The last reason a spawner failed to start, None once one started again.
        self.failure: str | None = None
        self._cond = threading.Condition()
        self._ready: deque[Spawner] = deque()
        self._starting: Spawner | None = None
        self._in_use = 0
        self._closed = False
        self._thread = threading.Thread(
            target=self._keep_filled, name="drillbook-sandbox-pool", daemon=True
        )
        self._thread.start()

    def wait_ready(self, timeout: float = STARTUP_S) -> bool:
        """Block until `size` spawners are waiting (True) or `timeout` passes (False)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._ready) < self.size and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return len(self._ready) >= self.size

    @contextmanager
    def lease(self, limits: Limits) -> Iterator[Spawner | None]:
        """A waiting spawner for one run (None when the limits differ from the pool's in what
        a started spawner cannot change, or when the pool cannot start any); back after."""
        spawner = self._take() if limits.baked() == self.limits.baked() else None
        if spawner is None:
            yield None
            return
        try:
            yield spawner
        finally:
            with self._cond:
                self._in_use -= 1
                keep = not self._closed and not spawner.spent
                if keep:
                    self._ready.append(spawner)
                self._cond.notify_all()
            if not keep:
                spawner.close()

    def close(self) -> None:
        """Kill the waiting spawners and stop starting new ones. Spawners leased out finish
        their run (the pool's thread waits for them, so they are not killed), then close."""
        with self._cond:
            self._closed = True
            waiting = list(self._ready)
            self._ready.clear()
            starting = self._starting
            idle = self._in_use == 0
            self._cond.notify_all()
        if starting is not None:
            starting.kill()
        for spawner in waiting:
            spawner.close()
        if idle:
            self._thread.join(timeout=STARTUP_S)

    def _take(self) -> Spawner | None:
        """A ready spawner, waiting for the one being started if need be."""
        deadline = time.monotonic() + STARTUP_S
        with self._cond:
            while True:
                while self._ready:
                    spawner = self._ready.popleft()
                    self._cond.notify_all()
                    if spawner.alive:
                        self._in_use += 1
                        return spawner
                    spawner.close()
                remaining = deadline - time.monotonic()
                if self._closed or self.failure is not None or remaining <= 0:
                    return None
                self._cond.wait(remaining)

    def _keep_filled(self) -> None:
        failures = 0
        while True:
            with self._cond:
                while not self._closed and len(self._ready) + self._in_use >= self.size:
                    self._cond.wait()
                if self._closed:
                    break
            failure = self._start_one()
            with self._cond:
                self.failure = failure
                self._cond.notify_all()
                if failure is None:
                    failures = 0
                    continue
                failures += 1
                self._cond.wait(min(RETRY_MAX_S, 2.0**failures))
        # Leased sandboxes die when this thread ends (--die-with-parent): let them finish.
        with self._cond:
            while self._in_use:
                self._cond.wait()

    def _start_one(self) -> str | None:
        """Start a spawner and wait until it is ready: None when it is, else why not."""
        try:
            spawner = start_spawner(self.limits, self.preload)
        except StartFailed as error:
            return str(error)
        with self._cond:
            if self._closed:
                spawner.close()
                return None
            self._starting = spawner
        ready = spawner.wait_ready()
        with self._cond:
            self._starting = None
            if ready and not self._closed:
                self._ready.append(spawner)
                return None
        if self._closed:
            spawner.close()
            return None
        failure = spawner.start_failure()
        spawner.close()
        return failure.reason


_shared_lock = threading.Lock()
_shared: list[WarmPool] = []


def shared_pool() -> WarmPool | None:
    """This process's one pool (one spawner, default limits, torch preloaded), started on
    first use; None where sandboxes cannot start (see available())."""
    if available() is not None:
        return None
    with _shared_lock:
        if not _shared:
            _shared.append(WarmPool())
        return _shared[0]
