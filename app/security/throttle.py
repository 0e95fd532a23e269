"""Login throttling: too many failed logins for one username within a window get 429."""

import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable


class LoginThrottle:
    def __init__(
        self,
        *,
        max_failures: int,
        window_s: float,
        clock: Callable[[], float] = time.monotonic,
        max_tracked: int = 10_000,
    ) -> None:
        self._max_failures = max_failures
        self._window_s = window_s
        self._clock = clock
        # Failures are kept per tried username; someone trying many names must not grow this
        # without bound.
        self._max_tracked = max_tracked
        self._failures: dict[str, deque[float]] = defaultdict(deque)
        self._lock = threading.Lock()

    def _recent(self, key: str) -> deque[float]:
        failures = self._failures[key]
        cutoff = self._clock() - self._window_s
        while failures and failures[0] <= cutoff:
            failures.popleft()
        return failures

    def retry_after(self, key: str) -> float | None:
        """Seconds until another try is allowed, or None if one is allowed now."""
        with self._lock:
            failures = self._recent(key.lower())
            if len(failures) < self._max_failures:
                return None
            return max(0.0, failures[0] + self._window_s - self._clock())

    def failed(self, key: str) -> None:
        with self._lock:
            self._recent(key.lower()).append(self._clock())
            if len(self._failures) > self._max_tracked:
                self._forget_oldest()

    def tracked(self) -> int:
        with self._lock:
            return len(self._failures)

    def _forget_oldest(self) -> None:
        """Drop names whose failures have expired; if still too many, the longest quiet ones."""
        cutoff = self._clock() - self._window_s
        for name in [n for n, times in self._failures.items() if not times or times[-1] <= cutoff]:
            del self._failures[name]
        excess = len(self._failures) - self._max_tracked
        if excess > 0:
            quietest = sorted(self._failures, key=lambda n: self._failures[n][-1])[:excess]
            for name in quietest:
                del self._failures[name]

    def succeeded(self, key: str) -> None:
        with self._lock:
            self._failures.pop(key.lower(), None)
