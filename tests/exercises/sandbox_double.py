"""A test double for the sandbox's transport: stage 1 in a forked child of the test process.

`fork_run` has the shape of `drills.sandbox.run`: it runs the entry module's `main(request,
channel)` in a child process (forked, so torch is already imported), passes every frame through
JSON as the real channel does, and hands back a Finished with the frames, the blobs, what the
child printed and its status. It isolates nothing a hostile file could reach (that is the real
sandbox's job); it exists so that learner code, including the tests' hostile files that
monkeypatch torch, never runs in the test process where stage 2 measures.
"""

from __future__ import annotations

import importlib
import json
import multiprocessing
import os
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from typing import Any

from drills.sandbox.finished import Finished, Status

__all__ = ["Finished", "fork_run"]

TIMEOUT_S = 60.0


class PipeChannel:
    def __init__(self, connection: Any) -> None:
        self._connection = connection

    def send(self, frame: dict[str, Any], blobs: dict[str, bytes] | None = None) -> None:
        self._connection.send((json.dumps(frame, allow_nan=False), dict(blobs or {})))


def fork_run(
    entry: str,
    request: dict[str, Any],
    *,
    limits: object = None,
    on_frame: Callable[..., None] | None = None,
    pool: object = None,
) -> Finished:
    started = time.monotonic()
    receiver, sender = multiprocessing.Pipe(duplex=False)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        pid = os.fork()
        if pid == 0:  # the child: run stage 1, then leave without pytest's clean-up
            code = 1
            try:
                receiver.close()
                os.dup2(out.fileno(), 1)
                os.dup2(err.fileno(), 2)
                sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
                importlib.import_module(entry).main(request, PipeChannel(sender))
                code = 0
            except BaseException:
                traceback.print_exc()
            finally:
                sys.stdout.flush()
                sys.stderr.flush()
                os._exit(code)
        sender.close()
        frames: list[dict[str, Any]] = []
        blobs: dict[str, bytes] = {}
        status: Status = "ok"
        reason: str | None = None
        while True:
            left = TIMEOUT_S - (time.monotonic() - started)
            if left <= 0:
                os.kill(pid, 9)
                status, reason = "timeout", f"no end after {TIMEOUT_S:g} s"
                break
            if not receiver.poll(min(left, 1.0)):
                continue
            try:
                text, sent = receiver.recv()
            except EOFError:
                break
            frame = json.loads(text)
            frames.append(frame)
            blobs.update(sent)
            if on_frame is not None:
                on_frame(frame)
        receiver.close()
        _, wait_status = os.waitpid(pid, 0)
        exit_code = os.waitstatus_to_exitcode(wait_status)
        if status == "ok" and exit_code != 0:
            status, reason = "failed", f"exit code {exit_code}"
        out.seek(0)
        err.seek(0)
        return Finished(
            status,
            exit_code,
            tuple(frames),
            blobs,
            out.read().decode(errors="replace"),
            err.read().decode(errors="replace"),
            time.monotonic() - started,
            reason or "",
        )
