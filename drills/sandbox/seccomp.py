"""The sandbox's system-call filter, built with pyseccomp and handed to bwrap (`--seccomp FD`).

Everything is allowed except the calls below, which fail with EPERM: the code sees a Python
exception (PermissionError) it can print, instead of dying without a word. bwrap loads the filter
just before it runs our command, after its own set-up, and sets no_new_privs, so nothing inside
can lift it. A call from another ABI (32-bit `int 0x80`, x32) kills the process: libseccomp
filters only the native one, and the rules would not hold for the others' numbers.
"""

from __future__ import annotations

import errno
import functools
import tempfile
from typing import Any

import pyseccomp  # type: ignore[import-untyped]

# Each rule: the call, the reason it is denied. Rules with argument conditions follow below.
DENIED: tuple[tuple[str, str], ...] = (
    ("ptrace", "reading or steering another process (even inside) is a debugger's job, not ours"),
    ("process_vm_readv", "reads another process's memory without ptrace"),
    ("process_vm_writev", "writes another process's memory without ptrace"),
    ("mount", "mounts could uncover what bwrap hid"),
    ("umount2", "unmounting could uncover what a mount hides"),
    ("pivot_root", "changes the root of the mount namespace"),
    ("chroot", "no second root inside the sandbox"),
    ("fsopen", "the new mount API: same as mount"),
    ("fsconfig", "the new mount API: same as mount"),
    ("fsmount", "the new mount API: same as mount"),
    ("fspick", "the new mount API: same as mount"),
    ("move_mount", "the new mount API: same as mount"),
    ("open_tree", "the new mount API: clones mounts"),
    ("mount_setattr", "the new mount API: could make a read-only mount writable"),
    ("unshare", "new namespaces are the kernel's largest attack surface for unprivileged users"),
    ("setns", "joining another namespace"),
    ("kexec_load", "loads a new kernel"),
    ("kexec_file_load", "loads a new kernel"),
    ("init_module", "loads kernel code"),
    ("finit_module", "loads kernel code"),
    ("delete_module", "unloads kernel code"),
    ("bpf", "eBPF programs reach deep into the kernel"),
    ("perf_event_open", "a classic kernel attack surface and a side channel"),
    ("keyctl", "the kernel keyring is not namespaced"),
    ("add_key", "the kernel keyring is not namespaced"),
    ("request_key", "the kernel keyring is not namespaced"),
    ("userfaultfd", "stalls kernel memory accesses: a favourite of kernel exploits"),
    ("io_uring_setup", "io_uring can open sockets and files without these rules seeing it"),
    ("io_uring_enter", "io_uring can open sockets and files without these rules seeing it"),
    ("io_uring_register", "io_uring can open sockets and files without these rules seeing it"),
    ("personality", "changes of execution domain (e.g. no address randomisation)"),
    ("acct", "process accounting is host-wide"),
    ("swapon", "host-wide swap"),
    ("swapoff", "host-wide swap"),
    ("reboot", "host-wide"),
    ("settimeofday", "the clock is host-wide"),
    ("clock_settime", "the clock is host-wide"),
    ("clock_adjtime", "the clock is host-wide"),
    ("name_to_handle_at", "file handles can reach files outside the mounts"),
    ("open_by_handle_at", "file handles can reach files outside the mounts"),
    ("quotactl", "host-wide quotas"),
    ("syslog", "the kernel log may hold addresses and other users' events"),
    ("iopl", "raw port access"),
    (
        "inotify_init",
        "read-only mounts still report the host's reads (an exercise's answers opened)",
    ),
    (
        "inotify_init1",
        "read-only mounts still report the host's reads (an exercise's answers opened)",
    ),
    ("ioperm", "raw port access"),
)

# clone's flags (its first argument on x86-64 and arm64): each namespace flag has its own rule,
# since libseccomp compares one argument once per rule and rules are alternatives.
CLONE_NAMESPACE_FLAGS = {
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
AF_UNIX = 1
# TIOCSTI pushes characters into a terminal's input: typed into the host's shell if the code ever
# got hold of one. TIOCLINUX can do the same through the console's selection.
TIOCSTI = 0x5412
TIOCLINUX = 0x541C


def _deny(errno_value: int = errno.EPERM) -> int:
    return int(pyseccomp.ERRNO(errno_value))


def _known(name: str) -> bool:
    """Calls this architecture lacks are skipped (libseccomp cannot add a rule for them)."""
    return int(pyseccomp.resolve_syscall(pyseccomp.Arch.NATIVE, name)) >= 0


# What a spawner (spawner_inside.py) must still do to set up each child: a new PID, mount, IPC
# and UTS namespace and the child's mounts. Its children load the full filter afterwards.
SPAWNER_NEEDS = frozenset({"mount", "unshare"})
SPAWNER_CLONE_FLAGS = frozenset({"CLONE_NEWNS", "CLONE_NEWUTS", "CLONE_NEWIPC", "CLONE_NEWPID"})


def build_filter(*, spawner: bool = False) -> Any:
    rules = pyseccomp.SyscallFilter(pyseccomp.ALLOW)
    # Another ABI's call numbers mean other calls: kill, do not guess.
    rules.set_attr(pyseccomp.Attr.ACT_BADARCH, pyseccomp.KILL_PROCESS)
    for name, _reason in DENIED:
        if _known(name) and not (spawner and name in SPAWNER_NEEDS):
            rules.add_rule(_deny(), name)
    # clone3 passes its flags in memory, where a filter cannot look: ENOSYS makes glibc fall back
    # to clone, whose flags the rules below can check.
    if _known("clone3"):
        rules.add_rule(_deny(errno.ENOSYS), "clone3")
    for name, flag in CLONE_NAMESPACE_FLAGS.items():
        if spawner and name in SPAWNER_CLONE_FLAGS:
            continue
        rules.add_rule(_deny(), "clone", pyseccomp.Arg(0, pyseccomp.MASKED_EQ, flag, flag))
    # Sockets: AF_UNIX only (DataLoader workers and multiprocessing use it); no network family at
    # all, on top of the empty network namespace. socketpair is covered: only AF_UNIX has one.
    rules.add_rule(_deny(), "socket", pyseccomp.Arg(0, pyseccomp.NE, AF_UNIX))
    # ioctl's request is an unsigned int: compare the low 32 bits only, so set high bits do not
    # slip past.
    for request in (TIOCSTI, TIOCLINUX):
        rules.add_rule(_deny(), "ioctl", pyseccomp.Arg(1, pyseccomp.MASKED_EQ, 0xFFFFFFFF, request))
    return rules


@functools.cache
def filter_bpf(*, spawner: bool = False) -> bytes:
    """The compiled filter, as bwrap reads it from its --seccomp fd (built once per process)."""
    with tempfile.TemporaryFile() as compiled:
        build_filter(spawner=spawner).export_bpf(compiled)
        compiled.seek(0)
        return compiled.read()
