"""The bwrap command line of one sandbox: every flag is here, each with the reason it is there.

The command bwrap runs is prlimit, which sets the rlimits and execs Python: limits are in place
before the first line of our own code (and long before submitted code), and RLIMIT_NPROC is set
inside the sandbox's user namespace, where the kernel counts it for that namespace alone.
"""

from __future__ import annotations

import shutil

from drills.core.cpu_kernels import PINNED
from drills.sandbox.limits import Limits, prlimit_flags
from drills.sandbox.runtime import Runtime

BWRAP = shutil.which("bwrap") or "/usr/bin/bwrap"
PRLIMIT = shutil.which("prlimit") or "/usr/bin/prlimit"
SCRATCH = "/scratch"
HOSTNAME = "sandbox"

# The whole environment inside (after --clearenv): nothing of the worker's leaks in (it holds
# DRILLBOOK_* settings and the database's credentials).
ENVIRONMENT = {
    "PATH": "/usr/bin:/bin",
    "HOME": SCRATCH,  # the only writable home there is; caches land in the scratch tmpfs
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "OMP_NUM_THREADS": "1",  # one compute thread: results comparable across runs, 2 cores shared
    "MKL_NUM_THREADS": "1",
    "PYTHONHASHSEED": "0",  # set iteration order the same in every run (read: no -E, see below)
    "PYTHONDONTWRITEBYTECODE": "1",  # the code's mounts are read-only anyway
    **PINNED,  # the code paths every run uses, on every machine (cpu_kernels.py)
}

# Python flags: -s no user site, -S no site module (so no .pth file runs and no host path is
# added: sys.path is set explicitly), -P no script or cwd directory on sys.path. Not -I: it
# implies -E, which would ignore PYTHONHASHSEED; with --clearenv the environment is ours anyway.
PYTHON_FLAGS = ("-s", "-S", "-P")


def namespace_flags() -> list[str]:
    return [
        # Own user namespace: inside, the code holds no capability over anything the host owns.
        "--unshare-user",
        # ...and cannot make another one (nested namespaces are a large kernel attack surface).
        "--disable-userns",
        # Own PID namespace: host processes are invisible and cannot be signalled or traced;
        # when its first process ends, the kernel kills every other process in it.
        "--unshare-pid",
        # Own IPC namespace: no System V shared memory or semaphores of the host (PostgreSQL's).
        "--unshare-ipc",
        # Own UTS namespace: the host's name stays hidden (and cannot be changed).
        "--unshare-uts",
        "--hostname",
        HOSTNAME,
        # Own network namespace: only a loopback interface that is down; no network at all.
        "--unshare-net",
        # Own cgroup namespace where the kernel offers one: the host's cgroup paths stay hidden.
        "--unshare-cgroup-try",
    ]


def process_flags(*, spawner: bool = False) -> list[str]:
    capabilities = (
        # A spawner (spawner_inside.py) needs CAP_SYS_ADMIN to give each child its own mount
        # and PID namespaces. Inside its own user namespace only: as uid 0 there, mapped to the
        # unprivileged uid outside, it owns nothing on the host. Its children drop them all.
        ["--uid", "0", "--cap-add", "ALL"]
        if spawner
        # No capabilities (a no-op when bwrap is unprivileged, which it always is here).
        else ["--cap-drop", "ALL"]
    )
    return [
        # If the worker (bwrap's parent thread) dies, so does the sandbox: no orphans.
        "--die-with-parent",
        # setsid(): no controlling terminal, so TIOCSTI cannot type into the caller's terminal.
        "--new-session",
        *capabilities,
        "--clearenv",
        *(arg for name, value in ENVIRONMENT.items() for arg in ("--setenv", name, value)),
    ]


def mount_flags(runtime: Runtime, limits: Limits) -> list[str]:
    size = str(limits.scratch_bytes)
    return [
        # The allow-list, read-only: system, loader cache, BLAS alternatives, packages, drills.
        *(arg for source, dest in runtime.binds for arg in ("--ro-bind", source, dest)),
        *(arg for link, target in runtime.symlinks for arg in ("--symlink", target, link)),
        # An exercise's solution and hidden checks (and their bytecode) read as nothing inside:
        # the learner's code must not be able to copy the answer it is judged against.
        *(arg for path in runtime.hidden_files for arg in ("--ro-bind", "/dev/null", path)),
        *(
            arg
            for path in runtime.hidden_dirs
            for arg in ("--size", "4096", "--tmpfs", path, "--remount-ro", path)
        ),
        # A procfs of the new PID namespace: only the sandbox's own processes.
        "--proc",
        "/proc",
        # A minimal /dev: null, zero, full, random, urandom, tty, a private devpts; no disks.
        "--dev",
        "/dev",
        # Shared memory for DataLoader workers, sized (bwrap's /dev tmpfs is not).
        "--size",
        size,
        "--tmpfs",
        "/dev/shm",
        # The scratch directory: the cwd and HOME, the one place to write, sized.
        "--size",
        size,
        "--tmpfs",
        SCRATCH,
        # /tmp, sized, private.
        "--size",
        size,
        "--tmpfs",
        "/tmp",
        # The root bwrap builds is a tmpfs of its own, writable and unsized: make it read-only.
        "--remount-ro",
        "/",
        "--chdir",
        SCRATCH,
    ]


def program_command(
    runtime: Runtime, limits: Limits, module: str, arguments: list[str]
) -> list[str]:
    """prlimit, then Python running `module`'s main(arguments) with the sandbox's own sys.path."""
    boot = (
        f"import sys; sys.path[:0] = {list(runtime.sys_path)!r}; "
        f"from {module} import main; main(sys.argv[1:])"
    )
    python = [runtime.python, *PYTHON_FLAGS, "-c", boot, *arguments]
    return [PRLIMIT, *prlimit_flags(limits), "--", *python]


def inner_command(
    runtime: Runtime, limits: Limits, *, reply_fd: int, preload: tuple[str, ...]
) -> list[str]:
    """A one-run sandbox's program (inside.py)."""
    arguments = ["--reply-fd", str(reply_fd), "--preload", ",".join(preload)]
    return program_command(runtime, limits, "drills.sandbox.inside", arguments)


def spawner_command(
    runtime: Runtime,
    limits: Limits,
    *,
    reply_fd: int,
    control_fd: int,
    filter_fd: int,
    preload: tuple[str, ...],
) -> list[str]:
    """A spawner's program (spawner_inside.py): torch imported once, a fresh child per run."""
    arguments = [
        *("--reply-fd", str(reply_fd), "--control-fd", str(control_fd)),
        *("--filter-fd", str(filter_fd), "--scratch", SCRATCH, "--preload", ",".join(preload)),
    ]
    return program_command(runtime, limits, "drills.sandbox.spawner_inside", arguments)


def bwrap_argv(
    runtime: Runtime,
    limits: Limits,
    *,
    seccomp_fd: int,
    reply_fd: int,
    info_fd: int,
    preload: tuple[str, ...] = (),
    spawner: tuple[int, int] | None = None,
) -> list[str]:
    """The whole command line: a one-run sandbox, or with `spawner` (its control socket's and
    its children's filter's fds) a spawner sandbox."""
    command = (
        inner_command(runtime, limits, reply_fd=reply_fd, preload=preload)
        if spawner is None
        else spawner_command(
            runtime,
            limits,
            reply_fd=reply_fd,
            control_fd=spawner[0],
            filter_fd=spawner[1],
            preload=preload,
        )
    )
    return [
        BWRAP,
        # bwrap tells us the host pid of the sandbox's PID 1 here: killing that process ends the
        # sandbox and lets bwrap reap it (killing bwrap first leaves the reaper to the host's
        # init, a zombie forever where that init is a program that never reaps, as in Docker).
        "--info-fd",
        str(info_fd),
        *namespace_flags(),
        *process_flags(spawner=spawner is not None),
        *mount_flags(runtime, limits),
        # The system-call filter (seccomp.py), loaded by bwrap just before it runs the command;
        # a spawner's lets it make namespaces and mounts for its children, which load the full
        # one themselves.
        "--seccomp",
        str(seccomp_fd),
        "--",
        *command,
    ]
