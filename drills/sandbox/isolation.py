"""Making a process forked by the spawner (spawner.py) a sandbox of its own, with Linux system
calls through ctypes (Python 3.11 has no os.unshare).

The spawner already lives in a bubblewrap sandbox (no network, a read-only allow-list of the
filesystem, the rlimits) and holds capabilities only inside that sandbox's user namespace. Each
run's init starts as PID 1 of a new PID namespace (its keeper, a child of the spawner, unshared
one just before the fork) and then, before it starts the program that runs submitted code:

1. takes new mount, IPC and UTS namespaces;
2. mounts fresh, sized tmpfs over /scratch, /tmp and /dev/shm, and a procfs of its own PID
   namespace over /proc, and makes /dev read-only: nothing an earlier run wrote can be read,
   and nothing it writes outlives it;
3. moves the run's pipes to fds 0, 1, 2 and the reply fd and closes everything else (the
   spawner's control socket above all);
4. drops every capability (effective, permitted, inheritable, ambient and the bounding set),
   sets no_new_privs and loads the full system-call filter (seccomp.py), which also denies
   mount, unshare and the rest from here on.

What a run cannot reach afterwards: the spawner (in the parent PID namespace, invisible and
unsignalable), earlier or later runs (their namespaces die with their PID 1), and the worker
(outside bubblewrap altogether).
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mount.argtypes = (
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_char_p,
    ctypes.c_ulong,
    ctypes.c_char_p,
)
_libc.prctl.argtypes = (
    ctypes.c_int,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
    ctypes.c_ulong,
)

CLONE_NEWNS = 0x00020000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2
CAP_LAST_POSSIBLE = 63
LINUX_CAPABILITY_VERSION_3 = 0x20080522

# What bwrap's --proc makes read-only under /proc; a fresh procfs gets the same treatment.
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus")


class IsolationFailed(OSError):
    """A step of the set-up failed: the child must exit before running anything."""


def _check(result: int, what: str) -> None:
    if result != 0:
        number = ctypes.get_errno()
        raise IsolationFailed(number, f"{what}: {os.strerror(number)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(flags), f"unshare({flags:#x})")


def _bytes(text: str | None) -> bytes | None:
    return None if text is None else text.encode()


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str = "") -> None:
    result = _libc.mount(_bytes(source), target.encode(), _bytes(fstype), flags, data.encode())
    _check(result, f"mount {target}")


def _prctl(option: int, arg: int = 0) -> None:
    _check(_libc.prctl(option, arg, 0, 0, 0), f"prctl({option})")


def die_with_parent() -> None:
    """SIGKILL this process when its parent dies. (Whether the parent is already gone cannot
    be checked from a new PID namespace, where getppid() is 0; a child that outlives its keeper
    finds its pipes closed and ends.)"""
    _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)


def set_dumpable(dumpable: bool) -> None:
    """Whether processes of the same uid may read this one's memory and /proc files."""
    _prctl(PR_SET_DUMPABLE, int(dumpable))


def fresh_filesystem(*, scratch: str, scratch_bytes: int) -> None:
    """New mount, IPC and UTS namespaces; fresh private tmpfs and procfs; /dev read-only."""
    unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWUTS)
    # Nothing mounted here propagates back to the spawner's namespace.
    _mount(None, "/", None, MS_REC | MS_PRIVATE)
    # /dev is a tmpfs bubblewrap made writable: a file left there would reach the next run.
    _mount(None, "/dev", None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for path in (scratch, "/tmp", "/dev/shm"):
        _mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, f"size={scratch_bytes},mode=0755")
    _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC)
    for name in PROC_READ_ONLY:
        path = f"/proc/{name}"
        if os.path.exists(path):
            _mount(path, path, None, MS_BIND | MS_REC)
            _mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | MS_NOSUID | MS_NODEV)
    os.chdir(scratch)


def keep_only(fds: dict[int, int]) -> None:
    """Put each descriptor of `fds` (target -> current) at its target number and close every
    other one."""
    highest = max(fds) + 1
    # First above every target, then into place: a current number may be another's target.
    moved = {
        target: fcntl.fcntl(current, fcntl.F_DUPFD_CLOEXEC, highest)
        for target, current in fds.items()
    }
    for target, current in moved.items():
        os.dup2(current, target, inheritable=False)
    os.closerange(highest, os.sysconf("SC_OPEN_MAX"))
    for fd in range(highest):
        if fd not in fds:
            try:
                os.close(fd)
            except OSError:
                pass


class _CapHeader(ctypes.Structure):
    _fields_ = (("version", ctypes.c_uint32), ("pid", ctypes.c_int))


class _CapData(ctypes.Structure):
    _fields_ = (
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    )


def drop_capabilities() -> None:
    """No capability left in any set, and none that could come back through exec."""
    _prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL)
    for capability in range(CAP_LAST_POSSIBLE + 1):
        if _libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            break  # past the kernel's last capability (EINVAL)
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


class _SockFilter(ctypes.Structure):
    _fields_ = (
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    )


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter)))


def load_filter(bpf: bytes) -> None:
    """no_new_privs, then the compiled seccomp program (libseccomp's export: sock_filter[])."""
    count = len(bpf) // ctypes.sizeof(_SockFilter)
    if count == 0 or count * ctypes.sizeof(_SockFilter) != len(bpf):
        raise IsolationFailed(0, f"not a seccomp program: {len(bpf)} bytes")
    program = (_SockFilter * count).from_buffer_copy(bpf)
    fprog = _SockFprog(count, program)
    _prctl(PR_SET_NO_NEW_PRIVS, 1)
    _check(
        _libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.addressof(fprog), 0, 0),
        "seccomp",
    )
