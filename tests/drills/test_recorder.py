import pytest

from drills.core.recorder import MetricPoint, MetricRecorder


def test_points_flush_by_interval_and_at_the_end() -> None:
    now = [0.0]
    batches: list[list[MetricPoint]] = []
    recorder = MetricRecorder(batches.append, flush_interval_s=1.0, clock=lambda: now[0])
    for step in range(5):
        recorder.metric("loss", step, float(step))
        now[0] += 0.5  # one flush interval passes every second point
    recorder.flush()
    # The first point goes out at once; after that, one batch per interval.
    assert [len(batch) for batch in batches] == [1, 2, 2]
    assert recorder.series == {"loss": [[0, 0.0], [1, 1.0], [2, 2.0], [3, 3.0], [4, 4.0]]}


def test_no_emit_still_records() -> None:
    recorder = MetricRecorder()
    recorder.metric("loss", 0, 1)
    recorder.flush()
    assert recorder.series == {"loss": [[0, 1.0]]}


@pytest.mark.parametrize("value", [float("nan"), float("inf")])
def test_nonfinite_values_are_refused(value: float) -> None:
    with pytest.raises(ValueError, match="report finite values"):
        MetricRecorder().metric("loss", 3, value)
