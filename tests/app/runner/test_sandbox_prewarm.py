"""Each worker starts its sandbox spawner as it starts (app/runner/warm_preload.py), so the first
code run on it finds torch imported instead of waiting 4-5 s for it."""

import time

from distributed import Client, LocalCluster

from drills.sandbox import available
from tests.sandbox.support import needs_sandbox

pytestmark = needs_sandbox

# A spawner imports torch: seconds on a quiet machine, tens on a loaded one.
READY_S = 120.0


def spawner_ready() -> bool:
    """On a worker: whether its shared pool exists without any code run having asked for it,
    and has a spawner waiting."""
    from drills.sandbox import pool

    deadline = time.monotonic() + READY_S
    while not pool._shared:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return pool._shared[0].wait_ready(max(0.0, deadline - time.monotonic()))


def test_every_worker_has_a_spawner_waiting_before_any_code_run(cluster: LocalCluster) -> None:
    assert available() is None
    with Client(cluster) as client:
        ready = client.run(spawner_ready)
    assert ready and all(ready.values()), ready
