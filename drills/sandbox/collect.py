"""Reading a sandbox while it runs: its reply frames, stdout and stderr, each bounded.

One selector loop on the calling thread reads all three pipes, so a program that floods one of
them cannot stall on a full pipe while we wait on another (no deadlock), and frames reach
`on_frame` as they arrive. stdout and stderr keep their first `output_bytes` each and count the
rest; a stream that goes past OUTPUT_CEILING times the cap, or a reply past `reply_bytes`, stops
the sandbox as "too-much-output" (a few prints too many are only cut, with a marker).
"""

from __future__ import annotations

import json
import os
import re
import selectors
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from drills.sandbox.channel import MalformedReply, ReplyParser, ReplyTooLarge
from drills.sandbox.finished import Status
from drills.sandbox.limits import Limits, describe_bytes, describe_seconds

OUTPUT_CEILING = 16
READ_SIZE = 65536
EXCEPTION_LINE = re.compile(r"[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b")


class Capture:
    """The first `cap` bytes of one output stream, and how many bytes it wrote in all."""

    def __init__(self, name: str, cap: int) -> None:
        self.name = name
        self.cap = cap
        self.kept = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += data[:room]
        self.total += len(data)

    @property
    def flooded(self) -> bool:
        return self.total > OUTPUT_CEILING * self.cap

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        dropped = self.total - len(self.kept)
        if dropped > 0:
            text += f"\n[output cut at {describe_bytes(self.cap)}: {dropped} more bytes dropped]\n"
        return text


@dataclass(frozen=True)
class Stop:
    """Why we stopped a sandbox ourselves."""

    status: Status
    reason: str


class BwrapInfo:
    """What bwrap writes on its --info-fd (then closes): JSON with the host pid of the
    sandbox's PID 1, written before anything runs inside. A pidfd is opened on it at once
    (while that process surely exists), so a later kill cannot hit a recycled pid."""

    MAX = 4096

    def __init__(self) -> None:
        self.data = bytearray()
        self.pidfd: int | None = None

    def add(self, data: bytes) -> None:
        if data:
            self.data += data[: self.MAX - len(self.data)]
            return
        try:
            pid = json.loads(self.data).get("child-pid")
        except (ValueError, AttributeError):
            return
        if type(pid) is int and pid > 1:
            try:
                self.pidfd = os.pidfd_open(pid)
            except OSError:
                pass  # gone already, or no pidfd here: the process group is killed instead

    def close(self) -> None:
        if self.pidfd is not None:
            os.close(self.pidfd)
            self.pidfd = None


class Reader:
    def __init__(
        self, reply_fd: int, stdout_fd: int, stderr_fd: int, info_fd: int | None, limits: Limits
    ) -> None:
        """Reads the three pipes and bwrap's info pipe (None for a spawner's child, which has
        none); closes the reply and info pipes on close(), the others stay the caller's."""
        self.limits = limits
        self.parser = ReplyParser(limits.reply_bytes)
        self.stdout = Capture("stdout", limits.output_bytes)
        self.stderr = Capture("stderr", limits.output_bytes)
        self.frames: list[dict[str, Any]] = []
        self.blobs: dict[str, bytes] = {}
        self.stop: Stop | None = None
        self.info = BwrapInfo()
        self._owned = (reply_fd,) if info_fd is None else (reply_fd, info_fd)
        self._selector = selectors.DefaultSelector()
        sinks: tuple[tuple[int, Capture | BwrapInfo | None], ...] = (
            (reply_fd, None),
            (stdout_fd, self.stdout),
            (stderr_fd, self.stderr),
        )
        if info_fd is not None:
            sinks += ((info_fd, self.info),)
        for fd, sink in sinks:
            os.set_blocking(fd, False)
            self._selector.register(fd, selectors.EVENT_READ, sink)

    def retarget(self, limits: Limits) -> None:
        """Use a run's own caps (a warm sandbox was started with its pool's)."""
        self.limits = limits
        self.parser = ReplyParser(limits.reply_bytes, ready=self.parser.ready)
        self.stdout.cap = self.stderr.cap = limits.output_bytes

    @property
    def open(self) -> bool:
        return bool(self._selector.get_map())

    def pump(
        self,
        deadline: float,
        *,
        until_ready: bool = False,
        on_frame: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        """Read until every pipe is closed, the deadline passes, we decide to stop the sandbox
        (self.stop), or (until_ready) the sandbox has said READY."""
        while self.open and self.stop is None and not (until_ready and self.parser.ready):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            for key, _ in self._selector.select(remaining):
                self._read(key, on_frame)
                if self.stop is not None:
                    return

    def _read(
        self, key: selectors.SelectorKey, on_frame: Callable[[dict[str, Any]], None] | None
    ) -> None:
        try:
            data = os.read(key.fd, READ_SIZE)
        except BlockingIOError:
            return
        if not data:
            self._selector.unregister(key.fd)
        sink: Capture | BwrapInfo | None = key.data
        if isinstance(sink, BwrapInfo):
            sink.add(data)
            return
        if sink is not None:
            sink.add(data)
            if sink.flooded:
                limit = describe_bytes(OUTPUT_CEILING * sink.cap)
                self.stop = Stop("too-much-output", f"printed more than {limit} to {sink.name}")
            return
        try:
            if not data:
                self.parser.finish()
            for frame, blobs in self.parser.feed(data):
                self.frames.append(frame)
                self.blobs.update(blobs)
                if on_frame is not None:
                    on_frame(frame)
        except ReplyTooLarge:
            limit = describe_bytes(self.limits.reply_bytes)
            self.stop = Stop("too-much-output", f"wrote more than {limit} to its reply")
        except MalformedReply as error:
            self.stop = Stop("failed", f"sent a malformed reply: {error}")

    def close(self) -> None:
        self._selector.close()
        self.info.close()
        for fd in self._owned:
            os.close(fd)


def signal_of(returncode: int) -> int | None:
    """The signal that ended the sandbox's program: bwrap reports a child killed by signal N as
    exit code 128 + N (and is itself -N when it was killed)."""
    if returncode < 0:
        return -returncode
    if 128 < returncode < 128 + signal.NSIG:
        return returncode - 128
    return None


def failure_reason(returncode: int, stderr: str, limits: Limits) -> str:
    number = signal_of(returncode)
    if number == signal.SIGXCPU:
        return f"used more than {describe_seconds(limits.cpu_s)} of CPU"
    if number == signal.SIGKILL:
        return "killed by signal 9 (likely memory)"
    if number is not None:
        return f"killed by signal {number} ({signal.Signals(number).name})"
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    last = next((line for line in reversed(lines) if EXCEPTION_LINE.match(line)), "")
    if last.startswith("MemoryError"):
        space = describe_bytes(limits.address_space_bytes)
        return f"ran out of memory (its limit is {space} of address space)"
    if last:
        return f"failed with {last[:300]}"
    return f"exited with code {returncode}"
