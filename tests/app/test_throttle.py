from app.security.throttle import LoginThrottle


def throttle(now: list[float], **kwargs: int) -> LoginThrottle:
    return LoginThrottle(max_failures=3, window_s=10, clock=lambda: now[0], **kwargs)


def test_the_limit_applies_within_the_window_only() -> None:
    now = [0.0]
    guard = throttle(now)
    for _ in range(3):
        assert guard.retry_after("Ann") is None
        guard.failed("Ann")
    assert guard.retry_after("ann") == 10  # case-insensitive, and says how long to wait
    now[0] = 10.5
    assert guard.retry_after("ann") is None


def test_a_success_clears_the_count() -> None:
    now = [0.0]
    guard = throttle(now)
    guard.failed("ann")
    guard.failed("ann")
    guard.succeeded("ann")
    guard.failed("ann")
    assert guard.retry_after("ann") is None


def test_many_tried_names_stay_bounded() -> None:
    now = [0.0]
    guard = throttle(now, max_tracked=100)
    for i in range(1000):
        now[0] = i * 0.001
        guard.failed(f"user{i}")
    assert guard.tracked() <= 101
    # The most recent names are the ones still counted.
    assert guard.tracked() and guard.retry_after("user999") is None
    for _ in range(2):
        guard.failed("user999")
    assert guard.retry_after("user999") is not None
