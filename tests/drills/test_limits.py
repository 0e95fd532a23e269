import pytest

from drills.core.limits import LimitedReporter, Limits, MemoryLimitExceeded, TimeLimitExceeded
from drills.core.runner import run_drill
from drills.kit.warmup import warm_up


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class Collect:
    def __init__(self) -> None:
        self.points: list[tuple[str, int, float]] = []

    def metric(self, name: str, step: int, value: float) -> None:
        self.points.append((name, step, value))


def test_time_limit_raises_once_the_budget_is_spent() -> None:
    clock, inner = FakeClock(), Collect()
    reporter = LimitedReporter(inner, Limits(time_limit_s=1.0), clock=clock)
    reporter.metric("loss", 0, 1.0)
    clock.now += 1.5
    with pytest.raises(TimeLimitExceeded, match="time limit of 1 s exceeded at step 1"):
        reporter.metric("loss", 1, 0.5)
    assert inner.points == [("loss", 0, 1.0)]


def test_memory_is_read_at_most_every_fifth_of_a_second() -> None:
    clock, reads = FakeClock(), []

    def rss_mb() -> float:
        reads.append(clock.now)
        return 500.0

    reporter = LimitedReporter(Collect(), Limits(memory_limit_mb=1000), clock=clock, rss_mb=rss_mb)
    for step in range(100):
        reporter.metric("loss", step, 1.0)
        clock.now += 0.01  # 100 metrics over one second
    assert 4 <= len(reads) <= 6


def test_memory_cap_raises_with_the_numbers() -> None:
    reporter = LimitedReporter(Collect(), Limits(memory_limit_mb=100), rss_mb=lambda: 300.0)
    with pytest.raises(MemoryLimitExceeded, match="memory limit of 100 MB exceeded"):
        reporter.metric("loss", 0, 1.0)


def test_no_memory_cap_never_reads_memory() -> None:
    def fail() -> float:
        raise AssertionError("memory was read")

    LimitedReporter(Collect(), Limits(), rss_mb=fail).metric("loss", 0, 1.0)


def test_a_tiny_time_limit_ends_the_run_as_timed_out() -> None:
    record = run_drill("overfit-one-batch", {"steps": 2000}, 0, limits=Limits(time_limit_s=1e-9))
    assert record["status"] == "timed_out"
    assert "time limit" in record["error"]
    assert record["observed"] is None


def test_a_tiny_memory_cap_ends_the_run_as_resource_limit() -> None:
    record = run_drill("overfit-one-batch", {}, 0, limits=Limits(memory_limit_mb=1))
    assert record["status"] == "resource_limit"
    assert "memory limit of 1 MB" in record["error"]


def test_a_time_out_keeps_the_metrics_reported_so_far() -> None:
    # Warm torch up first: in a cold process its one-off start-up (~1.5 s) would spend the whole
    # budget before the first step, so this test passed only after another test had warmed up.
    warm_up()
    limits = Limits(time_limit_s=0.3)  # 2000 steps take several times longer than this
    record = run_drill("overfit-one-batch", {"steps": 2000}, 0, limits=limits)
    assert record["status"] == "timed_out"
    losses = record["metrics"]["loss"]
    assert 0 < len(losses) < 2000
    assert [step for step, _ in losses] == list(range(len(losses)))
