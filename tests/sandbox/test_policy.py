"""The bwrap command line and the filter, read as data (no sandbox started)."""

from __future__ import annotations

from pathlib import Path

from drills.sandbox import Limits
from drills.sandbox.limits import describe_bytes, prlimit_flags
from drills.sandbox.policy import ENVIRONMENT, bwrap_argv
from drills.sandbox.runtime import find_runtime
from drills.sandbox.seccomp import DENIED, filter_bpf
from tests.sandbox.support import REPO

LIMITS = Limits(scratch_bytes=5 * 2**20)


def argv() -> list[str]:
    return bwrap_argv(
        find_runtime(65534, 65534), LIMITS, seccomp_fd=7, reply_fd=8, info_fd=9, preload=("torch",)
    )


def test_every_namespace_and_process_flag_is_there() -> None:
    flags = set(argv())
    assert {"--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-ipc"} <= flags
    assert {"--unshare-uts", "--unshare-net", "--unshare-cgroup-try", "--die-with-parent"} <= flags
    assert {"--new-session", "--clearenv", "--proc", "--dev", "--remount-ro"} <= flags
    assert "--seccomp" in flags


def test_only_the_allow_list_is_mounted_and_never_the_root_or_the_repository() -> None:
    args = argv()
    mounted = [args[i + 1] for i, arg in enumerate(args) if arg in ("--bind", "--ro-bind")]
    assert "--bind" not in args  # everything from the host is read-only
    assert "/" not in mounted and str(REPO) not in mounted
    assert str(REPO / "drills") in mounted and str(REPO / "app") not in mounted
    assert not [
        path
        for path in mounted
        if path.startswith(("/etc/", "/run", "/home", "/var"))
        and path not in ("/etc/ld.so.cache", "/etc/alternatives")
    ]


def test_scratch_tmp_and_shm_are_sized_tmpfs() -> None:
    args = argv()
    sized = {args[i + 3]: args[i + 1] for i, arg in enumerate(args) if arg == "--size"}
    writable = {path: size for path, size in sized.items() if "/exercises/" not in path}
    assert writable == dict.fromkeys(["/dev/shm", "/scratch", "/tmp"], str(5 * 2**20))
    # The rest are the exercises' bytecode folders, masked empty and read-only.
    masked = [path for path in sized if path not in writable]
    assert masked and all(path.endswith("/__pycache__") for path in masked)
    assert all(sized[path] == "4096" for path in masked)


def test_every_exercise_answer_is_masked() -> None:
    """solution.py and checks.py of every exercise read as nothing inside (covered by
    /dev/null): the learner's code cannot copy the reference or the hidden checks."""
    args = argv()
    covered = {
        args[i + 2]
        for i, arg in enumerate(args[:-2])
        if arg == "--ro-bind" and args[i + 1] == "/dev/null"
    }
    drills = Path(__file__).resolve().parents[2] / "drills"
    answers = [
        *drills.glob("catalog/*/exercises/*/solution.py"),
        *drills.glob("catalog/*/exercises/*/checks.py"),
    ]
    assert len(answers) >= 10
    inside = {f"/opt/drillbook/drills/{path.relative_to(drills)}" for path in answers}
    assert inside <= covered


def test_the_environment_is_explicit_and_has_no_drillbook_setting() -> None:
    args = argv()
    set_vars = {args[i + 1]: args[i + 2] for i, arg in enumerate(args) if arg == "--setenv"}
    assert set_vars == ENVIRONMENT
    assert not [name for name in set_vars if name.startswith("DRILLBOOK")]
    # Learner code computes with the code paths every run uses (drills/core/cpu_kernels.py).
    assert set_vars["ATEN_CPU_CAPABILITY"] == "default"
    assert set_vars["MKL_CBWR"] == "COMPATIBLE"
    assert set_vars["ONEDNN_MAX_CPU_ISA"] == "SSE41"


def test_rlimits_are_given_in_bytes() -> None:
    assert prlimit_flags(Limits()) == [
        "--cpu=60:61",
        f"--as={8 * 2**30}:{8 * 2**30}",
        f"--fsize={32 * 2**20}:{32 * 2**20}",
        "--nofile=256:256",
        "--nproc=64:64",
        "--core=0:0",
    ]
    assert describe_bytes(8 * 2**20) == "8 MiB" and describe_bytes(100) == "100 bytes"


def test_the_filter_denies_what_the_brief_lists_and_compiles() -> None:
    denied = {name for name, _ in DENIED}
    assert {"ptrace", "process_vm_readv", "process_vm_writev", "mount", "umount2"} <= denied
    assert {"pivot_root", "unshare", "setns", "kexec_load", "init_module", "bpf"} <= denied
    assert {"perf_event_open", "keyctl", "add_key", "request_key", "userfaultfd"} <= denied
    assert {"personality", "acct", "swapon", "reboot", "settimeofday", "clock_settime"} <= denied
    assert len(filter_bpf()) % 8 == 0 and len(filter_bpf()) > 100  # whole sock_filter records
