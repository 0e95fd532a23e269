"""Run one entry module of the drills package in a sandbox and return what it sent back.

Learners' code (PyTorch training loops) runs here, never in the web process nor in the worker
(which holds the database's credentials): a separate process under bubblewrap, as an
unprivileged user, with no network, its own PID/IPC/UTS/user/cgroup namespaces, a read-only
allow-list of the filesystem, sized private scratch space, a cleared environment, a seccomp
filter, rlimits and a wall-clock kill. Frames come back on a pipe of their own as length-prefixed
JSON with optional binary blobs; the outer side parses them as hostile input.

    run(entry, request, limits=, on_frame=, pool=) -> Finished    (run.py)
    available() -> None | reason                                  (availability.py)
    WarmPool(size, limits=, preload=)                             (pool.py)
    Channel.send(frame, blobs)   inside, for the entry            (channel.py)

    limits.py    what a sandbox may use       policy.py   the bwrap command line, flag by flag
    seccomp.py   the system-call filter       runtime.py  the interpreter and what is mounted
    identity.py  which user it runs as        process.py  one sandbox's life
    collect.py   reading its pipes, bounded   inside.py   the program inside
    channel.py   the wire format              finished.py what run() returns
    pool.py      warm sandboxes               shared_pool.py  the process's one pool
    availability.py  whether sandboxes start  probe.py    the entry available() runs
    testing.py   an entry that runs request["code"] (the tests' hostile programs)

Not here: cgroup limits (this VM has cgroup v1 and no systemd; production would put each
sandbox under memory.max and pids.max, since RLIMIT_AS bounds each process's address space, not
the sandbox's resident memory) and Landlock (available here, an optional second wall).
"""

from drills.sandbox.availability import available
from drills.sandbox.channel import Channel
from drills.sandbox.finished import Finished, Status
from drills.sandbox.limits import Limits
from drills.sandbox.pool import WarmPool
from drills.sandbox.run import run

__all__ = ["Channel", "Finished", "Limits", "Status", "WarmPool", "available", "run"]
