"""Keep the embedded worker pool at its configured size.

Two ways it shrinks for good, both seen under a class: LocalCluster closes a nanny whose worker
stayed unregistered past Dask's lost-worker timeout and never starts another; and a nanny whose
new worker failed to start (e.g. refused by the scheduler while the old worker of the same name
was still leaving) sits there with no worker and no retry. The keeper, called every half second
by the runner's watchdog, asks for the configured size again in the first case and replaces the
nanny in the second.
"""

import logging
import time
from collections.abc import Callable

from distributed import LocalCluster

logger = logging.getLogger(__name__)


class PoolKeeper:
    def __init__(
        self,
        cluster: LocalCluster,
        wanted: int,
        *,
        start_grace_s: float,  # a nanny whose worker has not registered by then is replaced
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._cluster = cluster
        self._wanted = wanted
        self._start_grace_s = start_grace_s
        self._clock = clock
        self._workerless_since: dict[object, float] = {}

    def check(self) -> None:
        cluster = self._cluster
        now = self._clock()
        for name, nanny in list(cluster.workers.items()):
            if getattr(nanny, "worker_address", None):
                self._workerless_since.pop(name, None)
                continue
            since = self._workerless_since.setdefault(name, now)
            if now - since > self._start_grace_s:
                logger.warning(
                    "worker %s has not started in %.0f s; replacing its nanny", name, now - since
                )
                del self._workerless_since[name]
                loop = cluster.loop
                if loop is not None:
                    loop.add_callback(self._replace, name)
        if len(cluster.workers) < self._wanted:
            logger.warning(
                "worker pool down to %d of %d nannies; starting replacements",
                len(cluster.workers),
                self._wanted,
            )
            cluster.scale(self._wanted)

    async def _replace(self, name: object) -> None:
        """On the cluster's event loop: drop the stuck nanny; the next check rescales."""
        nanny = self._cluster.workers.pop(name, None)
        if nanny is not None:
            await nanny.close()
