"""Worker hosts on one machine: the workers get cores of their own, everything else the others.

The scale-out set-up puts its workers on other hosts; on the benchmark's one machine they share
the cores with the web processes, the scheduler, PostgreSQL and the benchmark's own clients, and
the throughput measures that sharing. `--worker-cores N` gives the worker processes the last N
cores and moves everything else (the deployment's other processes, the local PostgreSQL server,
this process and the client threads it starts) to the rest, for the window; on exit every one of
them gets all the cores back. Needs the right to set other users' affinity (root) for
PostgreSQL.

An affinity belongs to a thread: every thread of a process is moved (/proc/PID/task), and threads
or processes started later inherit it from the one that starts them (a PostgreSQL backend from
the postmaster, an embedded worker restarted by its nanny from the web process: the rows count
processes that ended during a window).
"""

import os
from collections.abc import Iterator
from contextlib import contextmanager

import psutil

from support.deployments import Deployment, postgres_server_processes


def _move(pid: int, cores: set[int]) -> None:
    try:
        threads = [int(tid) for tid in os.listdir(f"/proc/{pid}/task")]
    except FileNotFoundError:
        return  # ended meanwhile
    for tid in threads:
        try:
            os.sched_setaffinity(tid, cores)
        except ProcessLookupError:
            pass


@contextmanager
def workers_on_own_cores(deployment: Deployment, worker_cores: int | None) -> Iterator[None]:
    if not worker_cores:
        yield
        return
    every = sorted(os.sched_getaffinity(0))
    if worker_cores >= len(every):
        raise SystemExit(f"--worker-cores {worker_cores}: this machine has {len(every)} cores")
    own, rest = set(every[-worker_cores:]), set(every[:-worker_cores])
    roles = deployment.process_roles()
    others: list[psutil.Process] = [
        process for role, processes in roles.items() if role != "worker" for process in processes
    ]
    moved = {process.pid: rest for process in others} | {p.pid: own for p in roles["worker"]}
    moved[os.getpid()] = rest
    try:
        for pid, cores in moved.items():
            _move(pid, cores)
        yield
    finally:
        # Backends PostgreSQL forked meanwhile inherited the postmaster's cores: all back too.
        server = [p.pid for p in postgres_server_processes()] if "database" in roles else []
        for pid in [*moved, *server]:
            _move(pid, set(every))
