"""Connect to the workers: an embedded LocalCluster by default, or an external scheduler."""

import logging
from typing import Any

import dask
from distributed import Client, LocalCluster, WorkerPlugin

from app.config import Settings

logger = logging.getLogger(__name__)


class WarmUp(WorkerPlugin):
    """Pay torch's cold costs (import, the lazy torch._dynamo import of the first optimizer) when a
    worker starts, not in the first learner's run. Registered as a plugin, so a worker the nanny
    restarts after a crash is warmed up again."""

    name = "drillbook-warm-up"

    def setup(self, worker: Any) -> None:
        from drills.warmup import warm_up

        warm_up()


def local_cluster(*, workers: int, memory_limit: str) -> LocalCluster:
    """Worker processes on this machine, one thread each (a run is single-threaded by design)."""
    # A task whose worker dies is reported lost at once instead of being retried elsewhere: the
    # learner sees "worker lost" and decides; a retry would silently re-run a crashing job.
    # (An external scheduler needs the same setting in its own config.)
    dask.config.set({"distributed.scheduler.allowed-failures": 0})
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=memory_limit,
        host="127.0.0.1",  # Dask's TCP is unauthenticated: keep the embedded cluster on loopback
        # No dashboard; the scheduler's small HTTP server (health checks) takes any free port
        # instead of 8787, so two clusters on one machine (app + tests) do not collide.
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        silence_logs=logging.WARNING,
    )


def connect(settings: Settings) -> tuple[Client, LocalCluster | None]:
    cluster: LocalCluster | None = None
    if settings.scheduler_address:
        client = Client(settings.scheduler_address, timeout=30)
    else:
        cluster = local_cluster(workers=settings.workers, memory_limit=settings.worker_memory_limit)
        client = Client(cluster)
    client.register_plugin(WarmUp())
    logger.info("workers ready: %s", list(client.scheduler_info()["workers"]))
    return client, cluster
