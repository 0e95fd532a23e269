"""A spawner: one long-lived sandbox with torch imported that forks a fresh sandbox per run.

The worker's side of spawner_inside.py. A one-run sandbox pays `import torch` (4-5 s of CPU
here) for every run, so back-to-back code runs were bound by the imports, not the training
(0.16 of the compute limit). A spawner pays it once; each run is a child forked from it that
takes its own PID, mount, IPC and UTS namespaces, fresh tmpfs, no capabilities and the full
system-call filter before it reads its request (isolation.py), and ends with its run.

    spawner = start_spawner(limits)      # bwrap, preload, READY (as a one-run sandbox)
    spawner.run(request, limits, on_frame) -> Finished     # a child per call, one at a time
    spawner.close()

A run's pipes are made here and handed over with SCM_RIGHTS, so the child's stdout, stderr and
reply reach this process directly (read by the same bounded Reader as a one-run sandbox's);
the spawner only forks, waits and kills. If it stops answering, the whole spawner is killed.
"""

from __future__ import annotations

import os
import select
import socket
import time
from collections.abc import Callable
from typing import Any

from drills.sandbox.collect import Reader, Stop
from drills.sandbox.finished import Finished
from drills.sandbox.limits import Limits
from drills.sandbox.process import EXIT_GRACE_S, KILL_GRACE_S, Sandbox, conclude, launch
from drills.sandbox.seccomp import filter_bpf

# A spawner serves this many runs, then is replaced: its own CPU count (RLIMIT_CPU is per
# process and includes its preload) grows a little with every fork.
RUNS_PER_SPAWNER = 200
MESSAGE_MAX = 256


class SpawnerGone(Exception):
    """The spawner stopped answering; it has been killed."""


class Spawner(Sandbox):
    def __init__(self, sandbox: Sandbox, control: socket.socket) -> None:
        super().__init__(sandbox.process, sandbox.reader)
        self.control = control
        self.runs = 0

    @property
    def spent(self) -> bool:
        return self.runs >= RUNS_PER_SPAWNER or not self.alive

    def run(
        self,
        request: bytes,
        limits: Limits,
        on_frame: Callable[[dict[str, Any]], None] | None = None,
    ) -> Finished:
        """Fork a child for this one request and read it to its end."""
        self.runs += 1
        started = time.monotonic()
        stdin_read, stdin_write = os.pipe()
        stdout_read, stdout_write = os.pipe()
        stderr_read, stderr_write = os.pipe()
        reply_read, reply_write = os.pipe()
        theirs = [stdin_read, stdout_write, stderr_write, reply_write]
        try:
            socket.send_fds(self.control, [b"run %d" % limits.scratch_bytes], theirs)
        except OSError:
            for fd in (stdin_write, stdout_read, stderr_read, reply_read):
                os.close(fd)
            self.kill()
            return Finished("failed", None, reason="the sandbox's spawner was gone")
        finally:
            for fd in theirs:
                os.close(fd)
        reader = Reader(reply_read, stdout_read, stderr_read, None, limits)
        try:
            return self._follow(reader, request, stdin_write, limits, started, on_frame)
        finally:
            reader.close()
            for fd in (stdout_read, stderr_read):
                os.close(fd)

    def _follow(
        self,
        reader: Reader,
        request: bytes,
        stdin: int,
        limits: Limits,
        started: float,
        on_frame: Callable[[dict[str, Any]], None] | None,
    ) -> Finished:
        deadline = started + limits.wall_s
        try:
            # The child says READY once it is isolated; it then reads the request at once.
            reader.pump(deadline, until_ready=True)
            if reader.parser.ready and reader.stop is None:
                with os.fdopen(stdin, "wb", closefd=False) as pipe:
                    pipe.write(request)
        except BrokenPipeError:
            pass  # it died first: its exit status says how
        finally:
            os.close(stdin)
        try:
            reader.pump(deadline, on_frame=on_frame)
        except BaseException:
            # on_frame raised (a cancelled run): the run ends here, and the spawner must have
            # reported it before it can take the next one.
            self._kill_child()
            raise
        timed_out = reader.stop is None and reader.open
        returncode = None
        try:
            if reader.stop is None and not timed_out:
                wait = max(0.0, deadline - time.monotonic()) + EXIT_GRACE_S
                returncode = self._exit_status(wait)
                timed_out = returncode is None
            if returncode is None:
                returncode = self._kill_child()
        except SpawnerGone as gone:
            reader.stop = Stop("failed", str(gone))
            returncode = -9
        return conclude(
            reader,
            timed_out=timed_out,
            returncode=returncode,
            wall_s=time.monotonic() - started,
            limits=limits,
        )

    def _exit_status(self, timeout: float) -> int | None:
        """The child's exit code (negative: killed by that signal) once the spawner reports
        it, or None if it has not within `timeout`."""
        readable, _, _ = select.select([self.control], [], [], timeout)
        if not readable:
            return None
        try:
            message = self.control.recv(MESSAGE_MAX)
        except OSError:
            message = b""
        words = message.split()
        if len(words) == 2 and words[0] == b"exit" and words[1].isdigit():
            return os.waitstatus_to_exitcode(int(words[1]))
        self.kill()  # gone, or it said something we do not expect from it
        if words[:1] == [b"failed"]:
            raise SpawnerGone(message.decode(errors="replace"))
        raise SpawnerGone("the sandbox's spawner stopped answering")

    def _kill_child(self) -> int:
        """Ask the spawner to kill the child; kill the spawner too if it does not confirm."""
        try:
            self.control.send(b"kill")
            status = self._exit_status(KILL_GRACE_S)
        except (OSError, SpawnerGone):
            status = None
        if status is None:
            self.kill()
            return -9
        return status

    def close(self) -> None:
        # Closing the control socket ends the spawner (and any child) on its own; kill anyway.
        self.control.close()
        super().close()


def start_spawner(limits: Limits, preload: tuple[str, ...] = ("torch",)) -> Spawner:
    """Start a spawner sandbox; like a one-run sandbox it says READY once `preload` is in."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    children = os.memfd_create("drillbook-child-filter")
    try:
        os.write(children, filter_bpf())
        os.lseek(children, 0, os.SEEK_SET)
        process, reader = launch(limits, preload=preload, spawner=(theirs.fileno(), children))
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
        os.close(children)
    return Spawner(Sandbox(process, reader), ours)
