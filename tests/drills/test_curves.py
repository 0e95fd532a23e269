import pytest

from drills.core.curves import tail_mean, tail_std


def test_tail_is_the_last_tenth() -> None:
    values = [10.0] * 90 + [1.0, 3.0] * 5
    assert tail_mean(values) == pytest.approx(2.0)
    assert tail_std(values) == pytest.approx(1.0)


def test_short_curves_use_at_least_one_point() -> None:
    assert tail_mean([5.0, 4.0]) == 4.0
    assert tail_std([5.0]) == 0.0
    assert tail_mean([]) is None and tail_std([]) is None
