"""In-process fan-out of attempt events to the SSE streams that watch them.

The writer thread publishes after each database write; every open stream of that attempt gets the
event on its own asyncio queue. Events are hints to look: the database stays the source of truth,
so a stream that connects late reads what it missed from there.
"""

import asyncio
import threading
from collections import defaultdict
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class AttemptEvent:
    attempt_id: int
    kind: str  # "points" | "status" | "done"
    data: dict[str, Any]


class _Subscription:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: asyncio.Queue[AttemptEvent] = asyncio.Queue()


class AttemptEventBroker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: dict[int, set[_Subscription]] = defaultdict(set)

    def subscribe(self, attempt_id: int) -> _Subscription:
        subscription = _Subscription(asyncio.get_running_loop())
        with self._lock:
            self._subscriptions[attempt_id].add(subscription)
        return subscription

    def unsubscribe(self, attempt_id: int, subscription: _Subscription) -> None:
        with self._lock:
            watchers = self._subscriptions.get(attempt_id)
            if watchers is not None:
                watchers.discard(subscription)
                if not watchers:
                    del self._subscriptions[attempt_id]

    def watchers(self, attempt_id: int) -> int:
        """How many streams are watching the attempt right now."""
        with self._lock:
            return len(self._subscriptions.get(attempt_id, ()))

    def publish(self, event: AttemptEvent) -> None:
        """Safe to call from any thread."""
        with self._lock:
            watchers = list(self._subscriptions.get(event.attempt_id, ()))
        for subscription in watchers:
            try:
                subscription.loop.call_soon_threadsafe(subscription.queue.put_nowait, event)
            except RuntimeError:
                # The stream's event loop is closed (server shutting down): nobody to tell.
                pass
