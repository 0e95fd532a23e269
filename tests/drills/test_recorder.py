import pytest

from drills.core.recorder import MetricPoint, MetricRecorder


class Clocks:
    """A fake wall clock and a fake CPU clock of the training thread."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.work = 0.0

    def recorder(self, batches: list[list[MetricPoint]], **options: float) -> MetricRecorder:
        return MetricRecorder(
            batches.append, clock=lambda: self.wall, work_clock=lambda: self.work, **options
        )


def batch_sizes(points: int, *, wall_per_point: float, work_per_point: float) -> list[int]:
    clocks = Clocks()
    batches: list[list[MetricPoint]] = []
    recorder = clocks.recorder(batches, flush_interval_s=1.0, max_wait_s=5.0)
    for step in range(points):
        recorder.metric("loss", step, float(step))
        clocks.wall += wall_per_point
        clocks.work += work_per_point
    recorder.flush()
    assert recorder.series == {"loss": [[step, float(step)] for step in range(points)]}
    assert [point for batch in batches for point in batch] == [
        ("loss", step, float(step)) for step in range(points)
    ]
    return [len(batch) for batch in batches]


def test_points_flush_once_per_interval_of_work_and_at_the_end() -> None:
    # The first point goes out at once; after that, one batch per second of CPU time.
    assert batch_sizes(5, wall_per_point=0.5, work_per_point=0.5) == [1, 2, 2]


def test_a_run_slowed_down_by_a_shared_core_sends_no_more_batches() -> None:
    # Three times the wall time for the same work (a core shared with two other runs): the
    # same batches, not three times as many.
    alone = batch_sizes(40, wall_per_point=0.25, work_per_point=0.25)
    shared = batch_sizes(40, wall_per_point=0.75, work_per_point=0.25)
    assert shared == alone
    assert len(alone) == 11


def test_a_run_that_waits_still_streams_within_the_wall_time_bound() -> None:
    # No CPU time passes (the run waits on something): a batch every max_wait_s all the same.
    assert batch_sizes(12, wall_per_point=2.0, work_per_point=0.0) == [1, 3, 3, 3, 2]


def test_no_emit_still_records() -> None:
    recorder = MetricRecorder()
    recorder.metric("loss", 0, 1)
    recorder.flush()
    assert recorder.series == {"loss": [[0, 1.0]]}


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_nonfinite_values_are_refused(value: float) -> None:
    with pytest.raises(ValueError, match="report finite values"):
        MetricRecorder().metric("loss", 3, value)
