"""The pool keeper's decisions, with a stand-in cluster and an injected clock (the real pool is
exercised in tests/app/runner/test_pool.py)."""

from typing import Any

from app.runner.pool import PoolKeeper
from tests.aio import run_to_end


class Nanny:
    def __init__(self, worker_address: str | None) -> None:
        self.worker_address = worker_address
        self.closed = False

    async def close(self) -> None:
        self.closed = True


class Loop:
    def __init__(self) -> None:
        self.callbacks: list[tuple[Any, tuple[Any, ...]]] = []

    def add_callback(self, function: Any, *args: Any) -> None:
        self.callbacks.append((function, args))


class Cluster:
    def __init__(self, **nannies: Nanny) -> None:
        self.workers: dict[str, Nanny] = dict(nannies)
        self.loop = Loop()
        self.scaled_to: list[int] = []

    def scale(self, n: int) -> None:
        self.scaled_to.append(n)


def test_a_closed_nanny_is_asked_for_again() -> None:
    cluster = Cluster(a=Nanny("tls://1"))
    PoolKeeper(cluster, 2, start_grace_s=60).check()  # type: ignore[arg-type]
    assert cluster.scaled_to == [2]


def test_a_nanny_without_a_worker_past_the_grace_is_replaced() -> None:

    now = [0.0]
    stuck, healthy = Nanny(None), Nanny("tls://1")
    cluster = Cluster(a=stuck, b=healthy)
    keeper = PoolKeeper(cluster, 2, start_grace_s=60, clock=lambda: now[0])  # type: ignore[arg-type]
    keeper.check()
    now[0] = 59.0
    keeper.check()
    assert cluster.loop.callbacks == [] and cluster.scaled_to == []  # still within its grace
    now[0] = 61.0
    keeper.check()
    [(replace, args)] = cluster.loop.callbacks
    run_to_end(lambda: replace(*args))
    assert stuck.closed and "a" not in cluster.workers and not healthy.closed
    keeper.check()
    assert cluster.scaled_to == [2]  # the next check asks for the size again
