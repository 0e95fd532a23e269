"""Hostile programs, each in a cold sandbox and again in one forked from a spawner: every one
ends as a clear non-ok or harmless result and leaves the host as it was. None of them imports
torch, so each takes a fraction of a second (the timing ones a few)."""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from drills.sandbox import Limits
from drills.sandbox.identity import SANDBOX_UID
from tests.sandbox import support
from tests.sandbox.support import REPO, gone, needs_sandbox, only_frame, submit

pytestmark = needs_sandbox


@pytest.fixture(params=["cold", "forked"], autouse=True)
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each program once in a one-run sandbox and once in a run forked from a spawner."""
    monkeypatch.setattr(support, "FORKED", request.param == "forked")
    return str(request.param)


# Calls the frame reports as the name of the exception they raised, or "ok".
TRY = """
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
def attempt(call, *args):
    try:
        result = call(*args)
    except Exception as error:
        return type(error).__name__ + ":" + str(getattr(error, "errno", ""))
    if isinstance(result, int) and result == -1:
        return "errno:" + errno.errorcode[ctypes.get_errno()]
    return "ok"
"""


def test_no_network_at_all_not_even_the_hosts_postgresql() -> None:
    finished = submit(
        """
        import socket
        results = {}
        for name, family, kind, address in [
            ("postgres", socket.AF_INET, socket.SOCK_STREAM, ("127.0.0.1", 5432)),
            ("outside", socket.AF_INET, socket.SOCK_STREAM, ("1.1.1.1", 53)),
            ("udp", socket.AF_INET, socket.SOCK_DGRAM, ("1.1.1.1", 53)),
            ("ipv6", socket.AF_INET6, socket.SOCK_STREAM, ("::1", 5432)),
            ("netlink", socket.AF_NETLINK, socket.SOCK_RAW, None),
            ("postgres-socket", socket.AF_UNIX, socket.SOCK_STREAM, request["pg_socket"]),
        ]:
            try:
                with socket.socket(family, kind) as s:
                    s.settimeout(2)
                    if address is not None:
                        s.connect(address)
                results[name] = "connected"
            except OSError as error:
                results[name] = type(error).__name__
        channel.send(results)
        """,
        request={"pg_socket": "/run/postgresql/.s.PGSQL.5432"},
    )
    results = only_frame(finished)
    assert results == {
        "postgres": "PermissionError",
        "outside": "PermissionError",
        "udp": "PermissionError",
        "ipv6": "PermissionError",
        "netlink": "PermissionError",
        "postgres-socket": "FileNotFoundError",
    }


def test_host_files_the_repository_and_the_web_app_are_not_there() -> None:
    paths = ["/etc/shadow", "/etc/passwd", "/root", "/run/postgresql", "/home", "/var", "/sys"]
    paths += [str(REPO / "pyproject.toml"), str(REPO / "var"), str(REPO / "app"), str(REPO)]
    finished = submit(
        """
        import os
        try:
            import app
            web = "imported"
        except ImportError as error:
            web = type(error).__name__
        channel.send({
            "present": [path for path in request["paths"] if os.path.exists(path)],
            "root": sorted(os.listdir("/")),
            "opt": sorted(os.listdir("/opt/drillbook")),
            "app": web,
        })
        """,
        request={"paths": paths},
    )
    seen = only_frame(finished)
    assert seen["present"] == []
    assert seen["app"] == "ModuleNotFoundError"
    assert set(seen["root"]) <= {"bin", "dev", "etc", "lib", "lib64", "opt", "proc", "sbin"} | {
        "scratch",
        "tmp",
        "usr",
    }
    assert seen["opt"] == ["drills", "site-packages"]
    assert (REPO / "pyproject.toml").exists()  # the host's copy is there, the sandbox's not


def test_the_environment_is_cleared(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DRILLBOOK_SECRET_KEY", "hunter2-not-for-learners")
    finished = submit(
        """
        import os
        leaks = []
        for pid in [name for name in os.listdir("/proc") if name.isdigit()]:
            try:
                with open(f"/proc/{pid}/environ", "rb") as environ:
                    seen = environ.read()
                if b"DRILLBOOK" in seen or b"hunter2" in seen:
                    leaks.append(pid)
            except OSError:
                pass
        channel.send({"environ": dict(os.environ), "leaks": leaks})
        """
    )
    seen = only_frame(finished)
    assert seen["leaks"] == []
    assert not [name for name in seen["environ"] if name.startswith("DRILLBOOK")]
    assert seen["environ"] == {
        "PATH": "/usr/bin:/bin",
        "HOME": "/scratch",
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "ATEN_CPU_CAPABILITY": "default",
        "MKL_CBWR": "COMPATIBLE",
        "ONEDNN_MAX_CPU_ISA": "SSE41",
        "PWD": "/scratch",
    }


def test_nothing_outside_scratch_is_writable() -> None:
    site = os.path.dirname(os.__file__)
    targets = ["/usr/probe", "/opt/drillbook/site-packages/probe", "/opt/drillbook/drills/probe"]
    targets += ["/probe", "/etc/probe", "/opt/probe", f"{site}/probe", str(REPO / "probe")]
    targets += ["/work/probe", "/proc/sys/kernel/hostname"]
    finished = submit(
        """
        results = {}
        for path in request["targets"] + ["/scratch/probe", "/tmp/probe", "/dev/shm/probe"]:
            try:
                with open(path, "w") as file:
                    file.write("x")
                results[path] = "written"
            except OSError as error:
                results[path] = type(error).__name__
        channel.send(results)
        """,
        request={"targets": targets},
    )
    results = only_frame(finished)
    assert {path: results[path] for path in targets if results[path] == "written"} == {}
    assert [results[path] for path in ("/scratch/probe", "/tmp/probe", "/dev/shm/probe")] == [
        "written"
    ] * 3
    assert not (REPO / "probe").exists() and not os.path.exists("/usr/probe")


def test_a_fork_bomb_is_held_to_its_process_count_and_leaves_nothing(own_uid: int) -> None:
    finished = submit(
        """
        import os, time
        children = 0
        while True:
            try:
                if os.fork() == 0:
                    time.sleep(60)
                    os._exit(0)
                children += 1
            except BlockingIOError:
                break
        channel.send({"children": children})
        """,
        Limits(processes=16, wall_s=20),
    )
    # Python and bwrap's reaper count too: fewer than 16 children.
    assert 0 < only_frame(finished)["children"] < 16
    assert gone(own_uid), "the sleeping children must die with the sandbox"
    assert subprocess.run(["true"], check=False).returncode == 0  # the host can still fork


def test_an_endless_fork_bomb_is_stopped_at_the_wall_clock(own_uid: int) -> None:
    finished = submit(
        """
        import os
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        Limits(processes=16, wall_s=2),
    )
    assert finished.status == "timeout"
    assert finished.reason == "stopped after 2 s of wall-clock time"
    assert gone(own_uid)


def test_a_memory_bomb_hits_the_address_space_limit() -> None:
    finished = submit(
        """
        hoard = []
        while True:
            hoard.append(b"x" * 2**26)
        """,
        Limits(address_space_bytes=2**29),
    )
    assert finished.status == "failed"
    assert finished.reason == "ran out of memory (its limit is 512 MiB of address space)"
    assert "MemoryError" in finished.stderr


def test_an_endless_loop_is_killed_at_the_wall_clock(own_uid: int) -> None:
    began = time.monotonic()
    finished = submit("while True:\n    pass\n", Limits(wall_s=1.5))
    assert finished.status == "timeout"
    assert finished.reason == "stopped after 1.5 s of wall-clock time"
    assert finished.exit_code is None
    assert 1.5 <= finished.wall_s < 4 and time.monotonic() - began < 5
    assert gone(own_uid)


def test_an_endless_loop_is_killed_at_its_cpu_limit() -> None:
    finished = submit("while True:\n    pass\n", Limits(cpu_s=1, wall_s=30))
    assert finished.status == "failed"
    assert finished.reason == "used more than 1 s of CPU"
    assert finished.wall_s < 10


def test_filling_the_disk_stops_at_the_file_and_scratch_sizes() -> None:
    finished = submit(
        """
        import errno, os
        chunk = b"x" * 2**20
        found = {}
        for directory in ("/scratch", "/tmp", "/dev/shm"):
            written = 0
            try:
                with open(f"{directory}/big", "wb") as big:
                    while True:
                        big.write(chunk)
                        big.flush()
                        written += len(chunk)
            except OSError as error:
                one = (errno.errorcode[error.errno], written)
            total, number = written, 0
            try:
                while True:
                    number += 1
                    with open(f"{directory}/more{number}", "wb") as more:
                        for _ in range(3):
                            more.write(chunk)
                            more.flush()
                            total += len(chunk)
            except OSError as error:
                found[directory] = [one, errno.errorcode[error.errno], total]
        channel.send(found)
        """,
        Limits(file_bytes=4 * 2**20, scratch_bytes=10 * 2**20),
    )
    found = only_frame(finished)
    for directory in ("/scratch", "/tmp", "/dev/shm"):
        (one_error, one_size), many_error, total = found[directory]
        assert one_error == "EFBIG" and one_size <= 4 * 2**20
        assert many_error == "ENOSPC" and total <= 10 * 2**20


def test_a_hundred_megabytes_of_output_is_cut_and_stops_the_run() -> None:
    began = time.monotonic()
    finished = submit(
        """
        import sys
        for _ in range(100):
            sys.stdout.write("x" * 2**20)
        channel.send({"survived": True})
        """,
        Limits(output_bytes=64 * 1024),
    )
    assert finished.status == "too-much-output"
    assert finished.reason == "printed more than 1 MiB to stdout"
    assert finished.stdout.startswith("x" * 64 * 1024)
    assert len(finished.stdout) < 65 * 1024 and "more bytes dropped]" in finished.stdout
    assert time.monotonic() - began < 10


def test_output_a_little_over_the_cap_is_only_cut() -> None:
    finished = submit(
        "import sys\nprint('y' * 100_000)\nprint('z' * 100, file=sys.stderr)\n",
        Limits(output_bytes=10_000),
    )
    assert finished.status == "ok"
    assert finished.stdout.startswith("y" * 10_000)
    assert finished.stdout.endswith("[output cut at 9.76562 KiB: 90001 more bytes dropped]\n")
    assert finished.stderr == "z" * 100 + "\n"


def test_ptrace_and_reading_other_processes_memory_are_denied() -> None:
    finished = submit(
        TRY
        + """
        class IOVec(ctypes.Structure):
            _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
        buffer = ctypes.create_string_buffer(8)
        local = ctypes.byref(IOVec(ctypes.cast(buffer, ctypes.c_void_p), 8))
        remote = ctypes.byref(IOVec(ctypes.cast(buffer, ctypes.c_void_p), 8))
        channel.send({
            "traceme": attempt(libc.ptrace, 0, 0, 0, 0),
            "attach": attempt(libc.ptrace, 16, 1, 0, 0),
            "vm_readv": attempt(libc.process_vm_readv, 1, local, 1, remote, 1, 0),
        })
        """.replace("\n        ", "\n")
    )
    assert only_frame(finished) == {
        "traceme": "errno:EPERM",
        "attach": "errno:EPERM",
        "vm_readv": "errno:EPERM",
    }


def test_raw_system_calls_for_namespaces_mounts_and_kernel_features_are_denied() -> None:
    finished = submit(
        TRY
        + """
        import threading
        syscall = libc.syscall
        CLONE_NEWUSER, CLONE_NEWNET, CLONE_NEWNS = 0x10000000, 0x40000000, 0x00020000
        started = []
        worker = threading.Thread(target=lambda: started.append(True))
        worker.start(); worker.join()
        channel.send({
            "unshare-user": attempt(libc.unshare, CLONE_NEWUSER),
            "unshare-net": attempt(libc.unshare, CLONE_NEWNET),
            "mount": attempt(libc.mount, b"none", b"/scratch", b"tmpfs", 0, None),
            "umount": attempt(libc.umount2, b"/usr", 0),
            "chroot": attempt(libc.chroot, b"/scratch"),
            "clone-newns": attempt(syscall, 56, CLONE_NEWNS | 17, 0, 0, 0, 0),
            "clone3": attempt(syscall, 435, 0, 0),
            "setns": attempt(libc.setns, 0, 0),
            "bpf": attempt(syscall, 321, 0, 0, 0),
            "keyctl": attempt(syscall, 250, 0, 0, 0, 0, 0),
            "userfaultfd": attempt(syscall, 323, 0),
            "io_uring": attempt(syscall, 425, 1, 0),
            "personality": attempt(libc.personality, 0x0040000),
            "perf": attempt(syscall, 298, 0, 0, -1, -1, 0),
            "a thread still starts": "ok" if started == [True] else "no",
        })
        """.replace("\n        ", "\n")
    )
    results = only_frame(finished)
    assert results.pop("clone3") == "errno:ENOSYS"
    assert results.pop("a thread still starts") == "ok"
    assert results == dict.fromkeys(results, "errno:EPERM")


def test_a_call_through_the_x32_abi_kills_the_process() -> None:
    finished = submit(
        TRY + "attempt(libc.syscall, 0x40000000 | 272, 0x10000000)\nchannel.send({'alive': 1})\n"
    )
    assert finished.status == "failed" and finished.frames == ()
    assert finished.reason == "killed by signal 31 (SIGSYS)"


def test_tiocsti_cannot_type_into_any_terminal() -> None:
    finished = submit(
        TRY
        + """
        import fcntl, termios
        def push(fd, request):
            return fcntl.ioctl(fd, request, b"x")
        master, slave = os.openpty()
        channel.send({
            "stdin": attempt(push, 0, termios.TIOCSTI),
            "own pty": attempt(push, slave, termios.TIOCSTI),
            "high bits set": attempt(libc.syscall, 16, slave, 0x1_0000_5412, b"x"),
            "controlling terminal": attempt(os.open, "/dev/tty", os.O_RDWR),
        })
        """.replace("\n        ", "\n")
    )
    assert only_frame(finished) == {
        "stdin": "PermissionError:1",
        "own pty": "PermissionError:1",
        "high bits set": "errno:EPERM",
        # --new-session: no controlling terminal at all.
        "controlling terminal": f"OSError:{errno.ENXIO}",
    }


def test_signals_cannot_reach_host_processes() -> None:
    if os.geteuid() != 0:
        pytest.skip("starting a host process as the sandbox's user needs root")
    # A host process of the very user the sandbox runs as: without a PID namespace, kill(-1)
    # from inside would reach it.
    victim = subprocess.Popen(["sleep", "60"], user=SANDBOX_UID, group=SANDBOX_UID)
    try:
        finished = submit(
            TRY
            + """
            import signal
            channel.send({
                "victim": attempt(os.kill, request["victim"], signal.SIGKILL),
                "parent": attempt(os.kill, request["parent"], signal.SIGKILL),
                "everyone": attempt(os.kill, -1, signal.SIGKILL),
                "init": attempt(os.kill, 1, signal.SIGKILL),
                "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
            })
            """.replace("\n            ", "\n"),
            request={"victim": victim.pid, "parent": os.getpid()},
        )
        seen = only_frame(finished)
        assert victim.poll() is None, "the host process must survive"
        assert seen == {
            # Host pids do not exist in the sandbox's PID namespace.
            "victim": "ProcessLookupError:3",
            "parent": "ProcessLookupError:3",
            # kill(-1) spares the caller and PID 1: there was no one else to signal.
            "everyone": "ProcessLookupError:3",
            # The namespace's init ignores a SIGKILL from inside it.
            "init": "ok",
            # The namespace's reaper and the program: nothing of the host (nor, in a forked
            # run, of its spawner).
            "pids": [1, 2],
        }
    finally:
        victim.kill()
        victim.wait()


@pytest.mark.parametrize(
    ("code", "status", "reason"),
    [
        (
            "os.write(channel.fd, b'\\xff\\xff\\xff\\xff')",
            "failed",
            "sent a malformed reply: a frame header of 4294967295 bytes",
        ),
        (
            "os.write(channel.fd, b'\\x00\\x00\\x00\\x05hello')",
            "failed",
            "sent a malformed reply: a frame that is not valid JSON",
        ),
        (
            "os.write(channel.fd, (40000).to_bytes(4, 'big') + b'[' * 40000)",
            "failed",
            "sent a malformed reply: a frame that is not valid JSON",
        ),
        (
            'h = b\'{"frame": {}, "blobs": [["w", 1099511627776]]}\'\n'
            "os.write(channel.fd, len(h).to_bytes(4, 'big') + h)",
            "too-much-output",
            "wrote more than 1 MiB to its reply",
        ),
        (
            "channel.send({'big': 1}, {'w': b'x' * 2**21})",
            "too-much-output",
            "wrote more than 1 MiB to its reply",
        ),
        (
            "while True:\n    channel.send({'spam': 'x' * 1000})",
            "too-much-output",
            "wrote more than 1 MiB to its reply",
        ),
        (
            "os.write(channel.fd, b'\\x00\\x00\\x00\\x40{\"frame\": {}')\nos.close(channel.fd)",
            "failed",
            "sent a malformed reply: the reply ended in the middle of a frame",
        ),
    ],
)
def test_a_forged_reply_is_rejected_and_what_came_before_is_kept(
    code: str, status: str, reason: str
) -> None:
    finished = submit(
        f"import os\nchannel.send({{'before': True}})\n{code}\nimport time\ntime.sleep(5)\n",
        Limits(reply_bytes=2**20, wall_s=20),
    )
    assert (finished.status, finished.reason) == (status, reason)
    assert finished.frames[0] == {"before": True}
    assert all(frame == {"spam": "x" * 1000} for frame in finished.frames[1:])
    assert finished.wall_s < 5  # stopped at once, not left to sleep


def test_the_test_process_is_unharmed() -> None:
    """After all of the above: this process can still make sockets and read its files."""
    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
    assert (REPO / "pyproject.toml").read_text()
    assert signal.getsignal(signal.SIGINT) is not None and sys.stdin is not None


def test_inotify_is_denied_so_the_hosts_reads_of_the_answers_go_unseen() -> None:
    # A watch on a read-only exercise folder reported the judge opening solution.py and
    # checks.py by name: when, and which, answers the host was reading.
    finished = submit(
        TRY
        + """
        channel.send({
            "inotify_init": attempt(libc.inotify_init),
            "inotify_init1": attempt(libc.inotify_init1, 0),
        })
        """.replace("\n        ", "\n")
    )
    assert only_frame(finished) == {"inotify_init": "errno:EPERM", "inotify_init1": "errno:EPERM"}
