"""What a worker does while it waits for runs: Dask's own upkeep, at a calm pace, and nothing
for the dashboard pages these clusters do not serve (app/runner/cluster_config.py)."""

from distributed import Client, LocalCluster


def test_a_worker_samples_nothing_for_a_dashboard_and_wakes_at_most_twice_a_second(
    cluster: LocalCluster,
) -> None:
    with Client(cluster) as client:
        duties = client.run(
            lambda dask_worker: {
                name: callback.callback_time
                for name, callback in dask_worker.periodic_callbacks.items()
            }
        )
    assert duties  # every worker of the pool answered
    for intervals_ms in duties.values():
        # The statistical profiler sampled every thread's stack every 10 ms, busy or idle: 30 ms
        # of an idle worker's CPU per second, and the run's interpreter at every sample.
        assert "profile" not in intervals_ms
        assert "profile-cycle" not in intervals_ms
        # Its upkeep goes on (heartbeats to the scheduler, its memory watched), none of it more
        # often than twice a second (the event loop's tick was every 20 ms).
        assert {"heartbeat", "memory_monitor", "tick"} <= intervals_ms.keys()
        assert min(intervals_ms.values()) >= 500, intervals_ms
