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


def connect(settings: Settings) -> tuple[Client, LocalCluster | None]:
    # A task whose worker dies is reported lost at once instead of being retried elsewhere: the
    # learner sees "worker lost" and decides; a retry would silently re-run a crashing job.
    # (An external scheduler needs the same setting in its own config.)
    dask.config.set({"distributed.scheduler.allowed-failures": 0})
    cluster: LocalCluster | None = None
    if settings.scheduler_address:
        client = Client(settings.scheduler_address, timeout=30)
    else:
        cluster = LocalCluster(
            n_workers=settings.workers,
            threads_per_worker=1,
            processes=True,
            memory_limit=settings.worker_memory_limit,
            dashboard_address=None,
            silence_logs=logging.WARNING,
        )
        client = Client(cluster)
    client.register_plugin(WarmUp())
    logger.info("workers ready: %s", list(client.scheduler_info()["workers"]))
    return client, cluster
