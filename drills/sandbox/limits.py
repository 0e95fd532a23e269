"""What one sandbox may use: the limits a caller chooses, and their rlimit flags for prlimit.

Most limits are enforced by the kernel inside the sandbox (rlimits, the sized tmpfs mounts); the
wall clock and the output and reply caps are enforced from outside, by the reader (collect.py).
This VM has cgroup v1 and no systemd, so there is no cgroup limit here: RLIMIT_AS stands in for a
memory cap and RLIMIT_NPROC for a pids cap. Production would add cgroup v2 `memory.max` and
`pids.max` around each sandbox (RLIMIT_AS bounds address space, not resident memory).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    # Wall-clock time from the request being sent to the sandbox being killed (its process group).
    wall_s: float = 60.0
    # RLIMIT_CPU, per process: SIGXCPU at this many seconds, SIGKILL one second later. A warm
    # sandbox's count includes its preload (~4 s for `import torch` and a warm-up step).
    cpu_s: int = 60
    # RLIMIT_AS: `import torch` alone maps ~3 GiB, so below ~4 GiB torch cannot even import.
    address_space_bytes: int = 8 * 2**30
    # RLIMIT_FSIZE: the largest file the code may write (it gets EFBIG, Python ignores SIGXFSZ).
    file_bytes: int = 32 * 2**20
    # RLIMIT_NOFILE: torch opens a fair number of files and a DataLoader a few pipes more.
    open_files: int = 256
    # RLIMIT_NPROC: processes and threads. Set inside the sandbox's own user namespace, so it
    # counts that sandbox's tasks only (kernel >= 5.14 counts per user namespace).
    processes: int = 64
    # Size of each tmpfs the code may write to (the scratch cwd, /tmp and /dev/shm): tmpfs pages
    # are host RAM, so one sandbox can hold at most three times this in files.
    scratch_bytes: int = 64 * 2**20
    # Cap on the captured stdout and, separately, stderr; the rest is dropped with a marker.
    output_bytes: int = 64 * 1024
    # Cap on everything sent through the reply channel (frames and blobs together).
    reply_bytes: int = 8 * 2**20

    def baked(self) -> tuple[int, int, int, int, int, int]:
        """The limits fixed when a sandbox starts (a warm one cannot change them later)."""
        return (
            self.cpu_s,
            self.address_space_bytes,
            self.file_bytes,
            self.open_files,
            self.processes,
            self.scratch_bytes,
        )


# The defaults, as one frozen value (for default arguments).
DEFAULT_LIMITS = Limits()


def prlimit_flags(limits: Limits) -> list[str]:
    """util-linux prlimit flags for the rlimits. Sizes go in bytes: prlimit reads `--as=8G` as
    8 bytes. Soft and hard are equal except CPU, whose soft limit sends SIGXCPU (so the reason can
    say "CPU") and whose hard limit, a second later, kills code that ignores that signal."""
    cpu = limits.cpu_s
    return [
        f"--cpu={cpu}:{cpu + 1}",
        f"--as={limits.address_space_bytes}:{limits.address_space_bytes}",
        f"--fsize={limits.file_bytes}:{limits.file_bytes}",
        f"--nofile={limits.open_files}:{limits.open_files}",
        f"--nproc={limits.processes}:{limits.processes}",
        # No core files: they would fill the scratch tmpfs and may hold other data.
        "--core=0:0",
    ]


def describe_bytes(size: int) -> str:
    """'8 MiB', '64 KiB', '100 bytes': sizes as a learner's reason shows them."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            amount = size / scale
            return f"{amount:g} {unit}" if amount != int(amount) else f"{int(amount)} {unit}"
    return f"{size} bytes"


def describe_seconds(seconds: float) -> str:
    return f"{seconds:g} s"
