"""Connect to the workers: an embedded LocalCluster by default, or an external scheduler.

Both speak TLS. The embedded cluster makes throw-away credentials at start-up (they live only in
this process and in the workers it spawns), so no other local process can submit code to it;
an external scheduler is reached with the certificate files named in the settings.
"""

import logging
from typing import Any

import dask
from distributed import Client, LocalCluster, Security

from app.config import Settings

logger = logging.getLogger(__name__)

WARM_PRELOAD = "app.runner.warm_preload"

# What every Drillbook cluster needs (an external scheduler needs the same in its own config).
CLUSTER_CONFIG: dict[str, Any] = {
    # A task whose worker dies is reported lost at once instead of being retried elsewhere: the
    # learner sees "worker lost" and decides; a retry would silently re-run a crashing job.
    "distributed.scheduler.allowed-failures": 0,
    # LocalCluster closes a nanny whose worker stays unregistered this long (and never starts
    # another: AttemptRunner's pool check does). A restarted worker warms up before it
    # registers, which takes well over the default 15 s on a machine busy with a class.
    "distributed.deploy.lost-worker-timeout": "120s",
    # No HTTP pages: the app uses none of them, and /info, /json, /metrics and /eventstream
    # answer anyone who can reach the port.
    "distributed.scheduler.http.routes": [],
    "distributed.worker.http.routes": [],
}


def local_cluster(
    *, workers: int, memory_limit: str, security: Security | None = None
) -> LocalCluster:
    """Worker processes on this machine, one thread each (a run is single-threaded by design),
    on loopback, over TLS with credentials made for this cluster alone."""
    dask.config.set(CLUSTER_CONFIG)
    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=memory_limit,
        host="127.0.0.1",
        protocol="tls",
        security=security or Security.temporary(),
        # Warm-up happens before a worker registers, so no run is ever sent to a cold worker.
        preload=[WARM_PRELOAD],
        # The scheduler's (route-less) HTTP server takes any free port instead of 8787, so two
        # clusters on one machine (app + tests) do not collide.
        dashboard_address=None,
        scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
        silence_logs=logging.WARNING,
    )


def external_security(settings: Settings) -> Security | None:
    """Client credentials for an external tls:// scheduler, from the settings' files."""
    if not settings.tls_ca_file:
        return None
    return Security(
        tls_ca_file=str(settings.tls_ca_file),
        tls_client_cert=str(settings.tls_cert_file) if settings.tls_cert_file else None,
        tls_client_key=str(settings.tls_key_file) if settings.tls_key_file else None,
        require_encryption=True,
    )


def connect(settings: Settings) -> tuple[Client, LocalCluster | None]:
    dask.config.set(CLUSTER_CONFIG)
    cluster: LocalCluster | None = None
    if settings.scheduler_address:
        client = Client(
            settings.scheduler_address, security=external_security(settings), timeout=30
        )
    else:
        cluster = local_cluster(workers=settings.workers, memory_limit=settings.worker_memory_limit)
        client = Client(cluster)
    logger.info("workers ready: %s", list(client.scheduler_info()["workers"]))
    return client, cluster
