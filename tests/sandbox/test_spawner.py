"""Runs forked from one spawner: each is a sandbox of its own, and nothing of one reaches the
next. (The hostile programs of test_hostile.py run forked too; these are about what a spawner
shares between runs.) Without torch, so each run takes a fraction of a second."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drills.sandbox import Limits, WarmPool, spawner
from tests.sandbox.support import gone, needs_sandbox, only_frame, processes_of, submit

pytestmark = needs_sandbox

LIMITS = Limits(wall_s=10)

LEAVE_TRACES = """
import ctypes, os
for folder in ("/scratch", "/tmp", "/dev/shm"):
    with open(f"{folder}/left-behind", "w") as note:
        note.write("secret of the run before")
libc = ctypes.CDLL(None, use_errno=True)
segment = libc.shmget(0x5EC2E7, 4096, 0o1666)  # IPC_CREAT | 0666
if os.fork() == 0:  # a daemon that would outlive the run
    os.setsid()
    if os.fork() == 0:
        import time
        time.sleep(600)
    os._exit(0)
channel.send({"segment": segment})
"""

LOOK_AROUND = """
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
status = dict(
    line.split(":", 1) for line in open("/proc/self/status").read().splitlines() if ":" in line
)
try:
    open("/dev/planted", "w")
    dev = "writable"
except OSError as error:
    dev = error.strerror
channel.send({
    "files": sorted(os.listdir("/scratch") + os.listdir("/tmp") + os.listdir("/dev/shm")),
    "segment": libc.shmget(0x5EC2E7, 0, 0),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
    "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),
    "capabilities": sorted(
        {status[key].strip() for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb")}
    ),
    "no_new_privs": status["NoNewPrivs"].strip(),
    "seccomp": status["Seccomp"].strip(),
    "dev": dev,
})
"""


@pytest.fixture
def pool(own_uid: int) -> Iterator[WarmPool]:
    pool = WarmPool(size=1, limits=LIMITS, preload=())
    assert pool.wait_ready(), pool.failure
    yield pool
    pool.close()
    assert gone(own_uid), "closing the pool ends its spawners and everything they forked"


def test_nothing_of_a_run_reaches_the_next_one(own_uid: int, pool: WarmPool) -> None:
    spawner_processes = set(processes_of(own_uid))
    assert only_frame(submit(LEAVE_TRACES, LIMITS, pool=pool))["segment"] >= 0
    assert gone(own_uid, besides=spawner_processes), "the daemon must die with its run"
    seen = only_frame(submit(LOOK_AROUND, LIMITS, pool=pool))
    assert seen == {
        "files": [],  # fresh tmpfs for the scratch directory, /tmp and /dev/shm
        "segment": -1,  # a new IPC namespace: the shared memory segment is not there
        "pids": [1, 2],  # the run's reaper and its program; not the spawner
        "fds": [0, 1, 2, 3, 4],  # stdio, the reply pipe, and the listing's own descriptor
        "capabilities": ["0000000000000000"],
        "no_new_privs": "1",
        "seccomp": "2",
        "dev": "Read-only file system",
    }


def test_a_run_stopped_at_the_wall_clock_leaves_the_spawner_serving(
    own_uid: int, pool: WarmPool
) -> None:
    spawner_processes = set(processes_of(own_uid))
    finished = submit("while True:\n    pass\n", Limits(wall_s=1), pool=pool)
    assert (finished.status, finished.reason) == (
        "timeout",
        "stopped after 1 s of wall-clock time",
    )
    assert gone(own_uid, besides=spawner_processes)
    assert only_frame(submit("channel.send({'next': True})", LIMITS, pool=pool)) == {"next": True}


def test_a_spawner_is_replaced_after_its_share_of_runs(
    monkeypatch: pytest.MonkeyPatch, pool: WarmPool
) -> None:
    monkeypatch.setattr(spawner, "RUNS_PER_SPAWNER", 2)
    first = set(pool._ready)
    for _ in range(2):
        assert only_frame(submit("channel.send({})", LIMITS, pool=pool)) == {}
    assert pool.wait_ready()
    assert set(pool._ready).isdisjoint(first)
    assert all(not sandbox.alive for sandbox in first)


def test_a_malformed_request_ends_the_run_not_the_spawner(pool: WarmPool) -> None:
    with pool.lease(LIMITS) as leased:
        assert leased is not None
        finished = leased.run(b"\x00\x00\x00\x03abc", LIMITS)
    assert finished.status == "failed"
    assert "JSONDecodeError" in finished.stderr
    assert only_frame(submit("channel.send({'next': True})", LIMITS, pool=pool)) == {"next": True}


def test_a_fork_bomb_stopped_at_the_wall_clock_leaves_the_next_run_its_processes(
    pool: WarmPool,
) -> None:
    bomb = (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n"
    )
    assert submit(bomb, Limits(wall_s=1), pool=pool).status == "timeout"
    # The runs of a spawner share its user namespace, where RLIMIT_NPROC counts: the next one
    # is forked only once the bomb's processes are gone (it failed with EAGAIN before).
    forks = """
    import os
    children = []
    for _ in range(8):
        child = os.fork()
        if child == 0:
            os._exit(0)
        children.append(child)
    for child in children:
        os.waitpid(child, 0)
    channel.send({"forked": len(children)})
    """
    assert only_frame(submit(forks, LIMITS, pool=pool)) == {"forked": 8}


def test_a_run_cancelled_from_on_frame_ends_before_the_next_one_starts(pool: WarmPool) -> None:
    class Cancelled(Exception):
        pass

    def cancel(frame: dict[str, object]) -> None:
        raise Cancelled

    endless = "import time\nchannel.send({'started': True})\nwhile True:\n    time.sleep(0.01)\n"
    with pytest.raises(Cancelled):
        submit(endless, LIMITS, pool=pool, on_frame=cancel)
    # The spawner reported the cancelled run's end before it went back to the pool: the next
    # run's exit status is its own (before, it read the cancelled one's and ended "failed").
    for number in range(3):
        finished = submit(f"channel.send({{'run': {number}}})", LIMITS, pool=pool)
        assert only_frame(finished) == {"run": number}


def test_a_run_reaches_neither_its_spawners_process_group_nor_its_inits_memory(
    pool: WarmPool,
) -> None:
    # kill(0) signals the caller's process group, past PID namespaces: before each run had a
    # session of its own, this killed the spawner and the next run waited for a new one.
    killed = submit("import os, signal\nos.kill(0, signal.SIGKILL)\n", LIMITS, pool=pool)
    assert killed.status == "failed" and killed.reason == "killed by signal 9 (likely memory)"
    memory = """
    try:
        open("/proc/1/mem", "r+b")
        opened = "yes"
    except OSError as error:
        opened = error.strerror
    channel.send({"init memory": opened})
    """
    assert only_frame(submit(memory, LIMITS, pool=pool)) == {"init memory": "Permission denied"}
    (spawner,) = pool._ready  # the same spawner served both
    assert spawner.runs == 2 and spawner.alive
