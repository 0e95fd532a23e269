"""The program a spawner sandbox runs: import torch once, then fork one fresh sandbox per run.

A cold sandbox spends 4-5 s of CPU importing torch for a run that trains in under one; a warm
one that serves a single run only moves that cost off the clock. The spawner pays it once: it
imports torch and takes one optimizer step, says READY, and then waits on its control socket.
For each run the worker sends the run's four pipe ends (stdin, stdout, stderr, reply) with
SCM_RIGHTS; the spawner forks a keeper, which unshares a new PID namespace and forks the run's
init into it; the init makes itself a sandbox of its own (isolation.py) and starts the program,
which reads the request. The spawner answers with the run's wait status when it ends, and
kills it when the worker asks ("kill") or goes away.

The spawner never runs submitted code, reads nothing a run wrote, and holds nothing secret: it
is a bubblewrap sandbox itself (cleared environment, no network, read-only allow-list), whose
capabilities reach only its own user namespace and which the children cannot see.

Control messages (SOCK_SEQPACKET, one message each):
    worker -> spawner   b"run <scratch bytes>" with 4 fds; b"kill"; end of stream: exit
    spawner -> worker   b"exit <wait status>"; b"failed <reason>" (the fork itself failed)
"""

from __future__ import annotations

import argparse
import os
import select
import signal
import socket
import sys
import time
import traceback

from drills.sandbox import inside, isolation
from drills.sandbox.channel import READY

# The child's reply pipe, at a fixed number (the spawner's own were closed or moved).
REPLY_FD = 3
MAX_MESSAGE = 256
RUN_FDS = 4
# How long a finished run's processes may take to be gone before the next run is forked anyway.
QUIET_S = 10.0


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="drills.sandbox.spawner_inside")
    parser.add_argument("--reply-fd", type=int, required=True)
    parser.add_argument("--control-fd", type=int, required=True)
    parser.add_argument("--filter-fd", type=int, required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--preload", default="")
    options = parser.parse_args(argv)
    inside.close_inherited(keep={options.reply_fd, options.control_fd, options.filter_fd})
    with os.fdopen(options.filter_fd, "rb") as program:
        bpf = program.read()
    inside.preload([name for name in options.preload.split(",") if name])
    control = socket.socket(fileno=options.control_fd)
    os.write(options.reply_fd, READY)
    os.close(options.reply_fd)
    # From here on nothing reads the worker's end of these: keep the pipes from filling.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    serve(control, bpf, scratch=options.scratch)


def serve(control: socket.socket, bpf: bytes, *, scratch: str) -> None:
    while True:
        message, fds, _flags, _address = socket.recv_fds(control, MAX_MESSAGE, RUN_FDS)
        if not message:
            os._exit(0)  # the worker closed its end: this spawner is done
        words = message.split()
        if words[:1] != [b"run"] or len(words) != 2 or len(fds) != RUN_FDS:
            for fd in fds:
                os.close(fd)
            continue  # "kill" with no run left, or garbage: nothing to do
        follow(control, spawn(fds, bpf, scratch=scratch, scratch_bytes=int(words[1])))


def spawn(fds: list[int], bpf: bytes, *, scratch: str, scratch_bytes: int) -> int | str:
    """Fork the run's keeper (see keep_run): its pid, or why the fork failed."""
    try:
        pid = os.fork()
    except OSError as error:
        for fd in fds:
            os.close(fd)
        return str(error)
    if pid == 0:
        keep_run(fds, bpf, scratch=scratch, scratch_bytes=scratch_bytes)
    for fd in fds:
        os.close(fd)
    return pid


def keep_run(fds: list[int], bpf: bytes, *, scratch: str, scratch_bytes: int) -> None:
    """In the keeper, a child of the spawner: unshare a PID namespace, fork the run's init into
    it, and end as the init ended. Never returns. (A process may unshare a PID namespace only
    once, so the spawner cannot do this itself for every run.) Killing the keeper kills the
    run: the init dies with it (its parent-death signal), and the namespace with its init."""
    code = 72
    try:
        isolation.die_with_parent()
        isolation.unshare(isolation.CLONE_NEWPID)
        pid = os.fork()
        if pid == 0:
            init_run(fds, bpf, scratch=scratch, scratch_bytes=scratch_bytes)
        for fd in fds:
            os.close(fd)
        code = exit_code_of(os.waitpid(pid, 0)[1])
    finally:
        os._exit(code)


def init_run(fds: list[int], bpf: bytes, *, scratch: str, scratch_bytes: int) -> None:
    """PID 1 of the run's namespace: make it a sandbox (isolation.py), start the program as
    PID 2, reap whatever is orphaned to it, and exit as the program did. Never returns.

    The program is not PID 1 itself because the kernel drops the signals an init has no handler
    for, its own SIGXCPU at the CPU limit among them; bwrap's reaper plays this part in a
    one-run sandbox, and the exit codes are the same (128 + N for a signal N)."""
    stdin, stdout, stderr, reply = fds
    try:
        isolation.die_with_parent()
        # A session and process group of the run's own: kill(0, ...) and setpriority on the
        # process group reach processes by group, past PID namespaces, and the spawner's group
        # would otherwise be the run's (a run could stop or kill the spawner).
        os.setsid()
        # Not dumpable: the program (same uid) cannot open this init's /proc/1/mem. It makes
        # itself dumpable again (serve_program); the flag is per process after the fork.
        isolation.set_dumpable(False)
        isolation.fresh_filesystem(scratch=scratch, scratch_bytes=scratch_bytes)
        isolation.keep_only({0: stdin, 1: stdout, 2: stderr, REPLY_FD: reply})
        isolation.drop_capabilities()
        isolation.load_filter(bpf)
        program = os.fork()
    except BaseException as error:  # nothing submitted has run: say why and stop
        message = f"the sandbox could not be set up: {error}\n".encode()
        for fd in (stderr, 2):  # the run's stderr, before or after it was moved to 2
            try:
                os.write(fd, message)
                break
            except OSError:
                continue
        os._exit(71)
    if program == 0:
        serve_program()
    # Only the program holds the run's pipes, so they close when it ends.
    for fd in (0, 1, 2, REPLY_FD):
        os.close(fd)
    code = 72
    try:
        while True:
            pid, status = os.wait()
            if pid == program:
                code = exit_code_of(status)
                break
    finally:
        os._exit(code)


def serve_program() -> None:
    """PID 2: say READY, serve the one request. Never returns."""
    try:
        isolation.die_with_parent()
        isolation.set_dumpable(True)  # its own /proc/self, as in a one-run sandbox
        # Python's standard streams still wrap the spawner's buffers: give the run its own.
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        os.write(REPLY_FD, READY)
        inside.serve(REPLY_FD)
    except BaseException:  # a malformed request: never back into the spawner's loop
        traceback.print_exc()
    finally:
        inside.exit_now(1)


def exit_code_of(status: int) -> int:
    """An exit status as one byte, the way shells and bwrap put it: 128 + N for signal N."""
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def follow(control: socket.socket, child: int | str) -> None:
    """Wait for the child to end, killing it if the worker asks or leaves; report how it ended."""
    if isinstance(child, str):
        control.send(f"failed {child}".encode()[:MAX_MESSAGE])
        return
    pidfd = os.pidfd_open(child)
    try:
        while True:
            readable, _, _ = select.select([control.fileno(), pidfd], [], [])
            if pidfd in readable:
                break
            message = control.recv(MAX_MESSAGE)
            # "kill", or the worker is gone (end of stream): either way the run ends now.
            os.kill(child, signal.SIGKILL)
            if not message:
                os.waitpid(child, 0)
                os._exit(0)
        _, status = os.waitpid(child, 0)
    finally:
        os.close(pidfd)
    wait_for_quiet()
    control.send(b"exit %d" % status)


def wait_for_quiet(limit_s: float = QUIET_S) -> None:
    """Wait until no process of the run is left: only bwrap's reaper (PID 1) and this spawner.

    A killed keeper is reaped at once, while the kernel is still tearing its run's namespace
    down; a fork bomb's dozens of processes still count against RLIMIT_NPROC (shared by all
    runs of this spawner, which share its user namespace) and the next run's fork would fail."""
    own = {"1", str(os.getpid())}
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if all(not name.isdigit() or name in own for name in os.listdir("/proc")):
            return
        time.sleep(0.01)
