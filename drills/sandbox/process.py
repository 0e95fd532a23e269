"""One sandbox process: starting it, waiting for it to be ready, giving it its one request, and
killing it.

The process tree: bwrap (as the sandbox's user, leader of a new process group) → bwrap's reaper,
PID 1 of the new PID namespace → prlimit's exec of Python (inside.py). To stop a sandbox we kill
its PID 1 (bwrap tells us its pid): the kernel kills everything left in the namespace and bwrap
reaps it and exits. Killing bwrap's process group is the fallback, and --die-with-parent kills
the reaper if only bwrap goes. No thread is started per sandbox: the caller's thread reads its
pipes (collect.Reader).

Note --die-with-parent follows the *thread* that started bwrap (PR_SET_PDEATHSIG): a sandbox
dies when that thread ends, which is why the warm pool starts its sandboxes from one long-lived
thread.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable
from typing import Any

import drills.sandbox.policy as policy
from drills.sandbox.collect import Reader, failure_reason, signal_of
from drills.sandbox.finished import Finished
from drills.sandbox.identity import sandbox_identity
from drills.sandbox.limits import Limits, describe_seconds
from drills.sandbox.runtime import RuntimeNotFound, find_runtime
from drills.sandbox.seccomp import filter_bpf

# How long a sandbox may take to become ready (bwrap, then the preload: `import torch` takes
# 3.4-5.2 s here on a quiet machine). Not part of the run's wall-clock budget.
STARTUP_S = 120.0
# How long bwrap may take to exit once its PID 1 is killed, before its group is killed too.
KILL_GRACE_S = 2.0
# After its pipes close, how long an exiting sandbox may take to be reaped before it is killed.
EXIT_GRACE_S = 5.0


class StartFailed(Exception):
    """No sandbox could start here; the message is one line saying why."""


class Sandbox:
    def __init__(self, process: subprocess.Popen[bytes], reader: Reader) -> None:
        self.process = process
        self.reader = reader
        self.killed = False

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def wait_ready(self, timeout: float = STARTUP_S) -> bool:
        self.reader.pump(time.monotonic() + timeout, until_ready=True)
        return self.reader.parser.ready and self.reader.stop is None and self.alive

    def start_failure(self) -> Finished:
        """What a sandbox that never became ready amounts to: "unavailable" when bwrap itself
        refused (it says "bwrap: ..."), "failed" when our own start-up code broke."""
        self.kill()
        self.reader.pump(time.monotonic() + EXIT_GRACE_S)
        self.process.wait()
        stderr = self.reader.stderr.text()
        first = stderr.strip().splitlines()[0] if stderr.strip() else ""
        if first.startswith("bwrap:"):
            return Finished("unavailable", None, stderr=stderr, reason=first)
        if self.reader.stop is not None:
            return Finished(
                self.reader.stop.status, None, stderr=stderr, reason=self.reader.stop.reason
            )
        why = failure_reason(self.process.returncode, stderr, self.reader.limits)
        reason = f"the sandbox did not start ({why})"
        return Finished(
            "failed", None, stdout=self.reader.stdout.text(), stderr=stderr, reason=reason
        )

    def run(
        self,
        request: bytes,
        limits: Limits,
        on_frame: Callable[[dict[str, Any]], None] | None = None,
    ) -> Finished:
        """Send the encoded request, read until the sandbox is gone, and say how it ended."""
        self.reader.retarget(limits)
        started = time.monotonic()
        deadline = started + limits.wall_s
        stdin = self.process.stdin
        assert stdin is not None
        try:
            stdin.write(request)
            stdin.close()
        except BrokenPipeError:
            pass  # it died while waiting: its exit status says how
        self.reader.pump(deadline, on_frame=on_frame)
        stop = self.reader.stop
        timed_out = stop is None and self.reader.open
        if stop is None and not timed_out:
            try:
                self.process.wait(timeout=max(0.0, deadline - time.monotonic()) + EXIT_GRACE_S)
            except subprocess.TimeoutExpired:
                timed_out = True
        if stop is not None or timed_out:
            self.kill()
        self.process.wait()
        return conclude(
            self.reader,
            timed_out=timed_out,
            returncode=self.process.returncode,
            wall_s=time.monotonic() - started,
            limits=limits,
        )

    def kill(self) -> None:
        """SIGKILL the sandbox's PID 1: the kernel kills the rest of its namespace, and bwrap
        reaps it and exits. If that is not known (bwrap failed early) or does not end bwrap
        soon, SIGKILL bwrap's whole process group."""
        if self.process.poll() is not None:
            return
        self.killed = True
        pidfd = self.reader.info.pidfd
        if pidfd is not None:
            try:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                self.process.wait(timeout=KILL_GRACE_S)
                return
            except (ProcessLookupError, subprocess.TimeoutExpired):
                pass
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    def close(self) -> None:
        self.kill()
        self.process.wait()
        self.reader.close()
        for stream in (self.process.stdin, self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def conclude(
    reader: Reader, *, timed_out: bool, returncode: int, wall_s: float, limits: Limits
) -> Finished:
    """How a run ended, from what its reader kept and its program's exit status."""
    stop = reader.stop
    common: dict[str, Any] = {
        "frames": tuple(reader.frames),
        "blobs": dict(reader.blobs),
        "stdout": reader.stdout.text(),
        "stderr": reader.stderr.text(),
        "wall_s": wall_s,
    }
    if stop is not None:
        return Finished(stop.status, None, reason=stop.reason, **common)
    if timed_out:
        reason = f"stopped after {describe_seconds(limits.wall_s)} of wall-clock time"
        return Finished("timeout", None, reason=reason, **common)
    exit_code = None if signal_of(returncode) is not None else returncode
    if returncode == 0:
        return Finished("ok", 0, **common)
    return Finished(
        "failed",
        exit_code,
        reason=failure_reason(returncode, common["stderr"], limits),
        **common,
    )


def start(limits: Limits, preload: tuple[str, ...] = ()) -> Sandbox:
    """Start one sandbox; it imports `preload`, says READY and waits for its request."""
    process, reader = launch(limits, preload=preload)
    return Sandbox(process, reader)


def launch(
    limits: Limits,
    *,
    preload: tuple[str, ...] = (),
    spawner: tuple[int, int] | None = None,
) -> tuple[subprocess.Popen[bytes], Reader]:
    """Start bwrap: a one-run sandbox, or with `spawner` (the fds of its control socket's far
    end and of its children's filter, passed on) a spawner sandbox (spawner.py)."""
    identity = sandbox_identity()
    for tool, package in ((policy.BWRAP, "bubblewrap"), (policy.PRLIMIT, "util-linux")):
        if not os.access(tool, os.X_OK):
            raise StartFailed(f"{tool} is missing (install {package})")
    try:
        runtime = find_runtime(identity.uid, identity.gid)
        bpf = filter_bpf(spawner=spawner is not None)
    except RuntimeNotFound as error:
        raise StartFailed(str(error)) from error
    except OSError as error:
        raise StartFailed(f"the seccomp filter cannot be built: {error}") from error
    seccomp_fd = os.memfd_create("drillbook-seccomp")
    reply_read, reply_write = os.pipe()
    info_read, info_write = os.pipe()
    try:
        os.write(seccomp_fd, bpf)
        os.lseek(seccomp_fd, 0, os.SEEK_SET)
        argv = policy.bwrap_argv(
            runtime,
            limits,
            seccomp_fd=seccomp_fd,
            reply_fd=reply_write,
            info_fd=info_write,
            preload=preload,
            spawner=spawner,
        )
        switch: dict[str, Any] = (
            {"user": identity.uid, "group": identity.gid, "extra_groups": []}
            if identity.switch
            else {}
        )
        process = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(seccomp_fd, reply_write, info_write, *(spawner or ())),
            # Its own process group, so one killpg reaches bwrap and its reaper.
            start_new_session=True,
            # bwrap's own environment: nothing of ours (the sandbox's is set by --clearenv).
            env={"PATH": "/usr/bin:/bin"},
            cwd="/",
            **switch,
        )
    except OSError as error:
        os.close(reply_read)
        os.close(info_read)
        raise StartFailed(f"bwrap could not be started: {error}") from error
    finally:
        for fd in (seccomp_fd, reply_write, info_write):
            os.close(fd)
    assert process.stdout is not None and process.stderr is not None
    reader = Reader(reply_read, process.stdout.fileno(), process.stderr.fileno(), info_read, limits)
    return process, reader
