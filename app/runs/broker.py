"""In-process wake-ups for the live streams of this web process.

A change feed (`app.runs.change_feed`: PostgreSQL's NOTIFY, or a poller on SQLite) calls `publish`
when an attempt changed; every open stream of that attempt wakes and reads what is new from the
database. A wake-up carries no data, so several coalesce into one read, and a stream that missed
one loses nothing: it reads everything after its cursor the next time it looks.
"""

import asyncio
import threading
from collections import defaultdict


class Subscription:
    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.changed = asyncio.Event()

    async def wait(self, timeout: float) -> None:
        """Until the attempt changes, or `timeout` seconds pass (a look anyway: the backstop for
        a wake-up lost while a feed reconnects)."""
        try:
            await asyncio.wait_for(self.changed.wait(), timeout)
        except TimeoutError:
            pass
        self.changed.clear()


class AttemptEventBroker:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._subscriptions: dict[int, set[Subscription]] = defaultdict(set)

    def subscribe(self, attempt_id: int) -> Subscription:
        subscription = Subscription(asyncio.get_running_loop())
        with self._lock:
            self._subscriptions[attempt_id].add(subscription)
        return subscription

    def unsubscribe(self, attempt_id: int, subscription: Subscription) -> None:
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

    def watched(self) -> set[int]:
        """The attempts at least one stream of this process is watching."""
        with self._lock:
            return set(self._subscriptions)

    def publish(self, attempt_id: int) -> None:
        """Wake the attempt's streams. Safe to call from any thread."""
        with self._lock:
            watchers = list(self._subscriptions.get(attempt_id, ()))
        _wake(watchers)

    def publish_all(self) -> None:
        """Wake every stream: after a feed reconnects, any change may have been missed."""
        with self._lock:
            watchers = [s for subscriptions in self._subscriptions.values() for s in subscriptions]
        _wake(watchers)


def _wake(subscriptions: list[Subscription]) -> None:
    for subscription in subscriptions:
        try:
            subscription.loop.call_soon_threadsafe(subscription.changed.set)
        except RuntimeError:
            # The stream's event loop is closed (server shutting down): nobody to tell.
            pass
