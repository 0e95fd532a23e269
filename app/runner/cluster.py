"""Connect to the workers: an embedded LocalCluster by default, or an external scheduler.

Both speak TLS. The embedded cluster makes throw-away credentials at start-up (they live only in
this process and in the workers it spawns), so no other local process can submit code to it;
an external scheduler is reached with the certificate files named in the settings.
"""

import logging

import dask
from distributed import Client, LocalCluster, Security

from app.core.config import Settings
from app.runner.cluster_config import CLUSTER_CONFIG, WARM_PRELOAD
from app.runner.warm_preload import SANDBOX_PREWARM

logger = logging.getLogger(__name__)


def local_cluster(
    *,
    workers: int,
    memory_limit: str,
    security: Security | None = None,
    sandbox_prewarm: bool = True,
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
        # Read by the warm-up: whether to start the sandbox spawner too.
        env={SANDBOX_PREWARM: "1" if sandbox_prewarm else "0"},
        # The scheduler's (route-less) HTTP server takes any free port instead of 8787, so two
        # clusters on one machine (app + tests) do not collide.
        dashboard_address=None,
        scheduler_kwargs={
            "dashboard": False,
            "dashboard_address": "127.0.0.1:0",
            # Workers reach the scheduler over TLS (its first listener, the cluster's address);
            # the web process's own client, in the same process, over a second, in-process one
            # (`in_process_address`).
            "protocol": ["tls://", "inproc://"],
            "host": ["127.0.0.1", None],
        },
        silence_logs=logging.WARNING,
    )


def in_process_address(cluster: LocalCluster) -> str:
    """The embedded scheduler's in-process listener. A client in the scheduler's own process
    reaches it without a socket: no TLS, no serialisation of its messages. Over loopback TLS
    both ends of every message (submit, done, release, the pool counts) were this process's CPU:
    Dask's thread in the web process went from 5.4 to 4.0 ms per run under 8 submitters."""
    assert cluster.scheduler is not None  # a LocalCluster's scheduler is in its process
    for listener in cluster.scheduler.listeners:
        if listener.contact_address.startswith("inproc://"):
            return str(listener.contact_address)
    raise RuntimeError("the embedded scheduler has no in-process listener")


def external_security(settings: Settings) -> Security | None:
    """The web server's side of an external cluster's mutual TLS: the CA and the client
    certificate and key that `python -m app certs` writes as ca.pem, client.pem and
    client-key.pem (`app/runner/certificates.py`). Settings refuse a tls:// address without
    all three, so None here means a plain tcp:// scheduler (development only)."""
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
        cluster = local_cluster(
            workers=settings.workers,
            memory_limit=settings.worker_memory_limit,
            sandbox_prewarm=settings.sandbox_prewarm,
        )
        client = Client(in_process_address(cluster), security=cluster.security, loop=cluster.loop)
    logger.info("workers ready: %s", list(client.scheduler_info()["workers"]))
    return client, cluster
