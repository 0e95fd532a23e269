"""Sandboxes started ahead of time, with torch already imported: a cold start costs 4-5 s here
(bwrap itself 40-90 ms), a warm one only the run.

Each sandbox serves one request and is thrown away (nothing of one learner's run can reach the
next); taking one wakes the pool's thread, which starts its replacement in the background. One
long-lived thread starts them all, because --die-with-parent kills a sandbox when the thread
that started it ends. Each waiting sandbox holds ~510 MiB of resident memory (torch) and one
process tree; its RLIMIT_CPU count already includes the ~4 s of its preload.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager

from drills.sandbox.availability import available
from drills.sandbox.limits import DEFAULT_LIMITS, Limits
from drills.sandbox.process import STARTUP_S, Sandbox, StartFailed, start

# After a failed start the pool waits before trying again: 2 s, 4 s, ... up to a minute.
RETRY_MAX_S = 60.0


class WarmPool:
    """Keeps `size` sandboxes started ahead with `preload` imported, each waiting for one
    request. Thread-safe. close() kills the waiting ones."""

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
        # The last reason a sandbox failed to start, None once one started again.
        self.failure: str | None = None
        self._cond = threading.Condition()
        self._ready: deque[Sandbox] = deque()
        self._starting: Sandbox | None = None
        self._in_use = 0
        self._closed = False
        self._thread = threading.Thread(
            target=self._keep_filled, name="drillbook-sandbox-pool", daemon=True
        )
        self._thread.start()

    def wait_ready(self, timeout: float = STARTUP_S) -> bool:
        """Block until `size` sandboxes are waiting (True) or `timeout` passes (False)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while len(self._ready) < self.size and not self._closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._cond.wait(remaining)
            return len(self._ready) >= self.size

    @contextmanager
    def lease(self, limits: Limits) -> Iterator[Sandbox | None]:
        """A waiting sandbox for one run (None when the limits differ from the pool's in what
        a started sandbox cannot change, or when the pool cannot start any); closed after."""
        sandbox = self._take() if limits.baked() == self.limits.baked() else None
        if sandbox is None:
            yield None
            return
        try:
            yield sandbox
        finally:
            sandbox.close()
            with self._cond:
                self._in_use -= 1
                self._cond.notify_all()

    def close(self) -> None:
        """Kill the waiting sandboxes and stop starting new ones. Sandboxes leased out keep
        running to their end (the pool's thread waits for them, so they are not killed)."""
        with self._cond:
            self._closed = True
            waiting = list(self._ready)
            self._ready.clear()
            starting = self._starting
            idle = self._in_use == 0
            self._cond.notify_all()
        if starting is not None:
            starting.kill()
        for sandbox in waiting:
            sandbox.close()
        if idle:
            self._thread.join(timeout=STARTUP_S)

    def _take(self) -> Sandbox | None:
        """A ready sandbox, waiting for the one being started if need be."""
        deadline = time.monotonic() + STARTUP_S
        with self._cond:
            while True:
                while self._ready:
                    sandbox = self._ready.popleft()
                    self._cond.notify_all()
                    if sandbox.alive:
                        self._in_use += 1
                        return sandbox
                    sandbox.close()
                remaining = deadline - time.monotonic()
                if self._closed or self.failure is not None or remaining <= 0:
                    return None
                self._cond.wait(remaining)

    def _keep_filled(self) -> None:
        failures = 0
        while True:
            with self._cond:
                while not self._closed and len(self._ready) >= self.size:
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
        """Start a sandbox and wait until it is ready: None when it is, else why not."""
        try:
            sandbox = start(self.limits, self.preload)
        except StartFailed as error:
            return str(error)
        with self._cond:
            if self._closed:
                sandbox.close()
                return None
            self._starting = sandbox
        ready = sandbox.wait_ready()
        with self._cond:
            self._starting = None
            if ready and not self._closed:
                self._ready.append(sandbox)
                return None
        if self._closed:
            sandbox.close()
            return None
        failure = sandbox.start_failure()
        sandbox.close()
        return failure.reason


_shared_lock = threading.Lock()
_shared: list[WarmPool] = []


def shared_pool() -> WarmPool | None:
    """This process's one pool (one sandbox, default limits, torch preloaded), started on
    first use; None where sandboxes cannot start (see available())."""
    if available() is not None:
        return None
    with _shared_lock:
        if not _shared:
            _shared.append(WarmPool())
        return _shared[0]
