"""The program bwrap starts: preload, signal ready, read one request, run its entry, exit.

It sets no limit itself (prlimit and bwrap did, before this ran), so there is nothing here the
submitted code could talk it out of. What it does before the entry runs is close every inherited
file descriptor but stdio and the reply pipe, import the preload modules (a warm sandbox waits
with torch imported and one optimizer step taken), and fix torch to one thread. An exception from
the entry is printed as a traceback on stderr and the exit code is 1.

It ends with os._exit once stdout and stderr are flushed: a normal interpreter shutdown with
torch's optimizer machinery imported takes ~3 s here, all of it after the last frame.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback

from drills.sandbox.channel import READY, Channel, read_request


def close_inherited(keep: set[int]) -> None:
    """Nothing but stdio and the descriptors in `keep` (the reply pipe; a spawner's control
    socket and filter) stays open: an inherited descriptor could point outside the sandbox's
    mounts."""
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass  # the directory listing's own descriptor, already closed


def warm_torch() -> None:
    """Import torch at one thread and take one Adam step: the first optimizer lazily imports
    torch._dynamo (~800 modules, over a second), which a warm sandbox should have behind it."""
    import torch

    torch.set_num_threads(1)
    torch.set_num_interop_threads(1)
    model = torch.nn.Linear(4, 1)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    model(torch.zeros(2, 4)).sum().backward()
    optimizer.step()


def preload(modules: list[str]) -> None:
    for module in modules:
        if module == "torch":
            warm_torch()
        else:
            importlib.import_module(module)


def one_thread() -> None:
    """If torch is already imported, hold it at one thread (OMP_NUM_THREADS=1 covers a later
    import)."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="drills.sandbox.inside")
    parser.add_argument("--reply-fd", type=int, required=True)
    parser.add_argument("--preload", default="")
    options = parser.parse_args(argv)
    close_inherited(keep={options.reply_fd})
    preload([name for name in options.preload.split(",") if name])
    os.write(options.reply_fd, READY)
    serve(options.reply_fd)


def serve(reply_fd: int) -> None:
    """Read the one request on stdin, run its entry with a channel on `reply_fd`, and exit:
    0 when it returned, its code for SystemExit, 1 (with a traceback) for anything else."""
    entry, payload = read_request(sys.stdin.buffer)
    module = importlib.import_module(entry)
    run = getattr(module, "main", None)
    if not callable(run):
        raise SystemExit(f"{entry} has no main(request, channel)")
    one_thread()
    try:
        run(payload, Channel(reply_fd))
    except SystemExit as stop:
        exit_now(exit_code(stop))
    except BaseException:
        traceback.print_exc()
        exit_now(1)
    exit_now(0)


def exit_code(stop: SystemExit) -> int:
    if stop.code is None or isinstance(stop.code, int):
        return stop.code or 0
    print(stop.code, file=sys.stderr)
    return 1


def exit_now(code: int) -> None:
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # closed or broken by the code: what it printed is what we have
    os._exit(code)
