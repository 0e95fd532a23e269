"""CPU time spent by each kind of process (web, worker, scheduler) over a measured window.

A deployment names its processes by role at any moment (support/deployments.py). A reading keeps
each process's user + system CPU seconds, keyed by pid and start time (a reused pid is another
process); the window's CPU is the end reading minus the start reading, a process started during
the window counting from zero. A process that ended during the window (a worker restarted by its
nanny) takes its CPU with it: the window reports how many did, so a figure that lost some is
recognisable.
"""

from collections.abc import Callable
from dataclasses import dataclass

import psutil

ProcessKey = tuple[int, float]  # pid, create_time
RoleReading = dict[str, dict[ProcessKey, float]]


def descendants_and_self(process: psutil.Process) -> list[psutil.Process]:
    try:
        return [process, *process.children(recursive=True)]
    except psutil.NoSuchProcess:
        return []


def read_cpu(roles: dict[str, list[psutil.Process]]) -> RoleReading:
    reading: RoleReading = {}
    for role, processes in roles.items():
        seconds = reading.setdefault(role, {})
        for process in processes:
            try:
                with process.oneshot():
                    times = process.cpu_times()
                    key = (process.pid, process.create_time())
            except psutil.NoSuchProcess:
                continue
            # Not children_user/children_system: those hold reaped children of any role.
            seconds[key] = times.user + times.system
    return reading


@dataclass(frozen=True)
class CpuWindow:
    seconds: dict[str, float]  # CPU seconds per role over the window
    processes: dict[str, int]  # processes per role at the end
    ended_during_window: int  # their CPU since the start is missing from `seconds`


def measure_cpu(roles: Callable[[], dict[str, list[psutil.Process]]]) -> Callable[[], CpuWindow]:
    """Read now; the returned function reads again and gives the window's CPU per role."""
    start = read_cpu(roles())

    def finish() -> CpuWindow:
        end = read_cpu(roles())
        started_keys = {key for by_process in start.values() for key in by_process}
        still_there = {key for by_process in end.values() for key in by_process}
        return CpuWindow(
            seconds={
                role: sum(
                    cpu - start.get(role, {}).get(key, 0.0) for key, cpu in by_process.items()
                )
                for role, by_process in end.items()
            },
            processes={role: len(by_process) for role, by_process in end.items()},
            ended_during_window=len(started_keys - still_there),
        )

    return finish
