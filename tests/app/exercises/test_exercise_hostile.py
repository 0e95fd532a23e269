"""Hostile code, submitted through the real route as a learner would: each ends as a clear run
that does not pass, and leaves the server, its database, its secrets and the other learners as
they were. (tests/sandbox/ walks each escape in depth at the sandbox's own level.)"""

import os
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.config import Settings
from app.main import create_app
from app.portfolio.signing import key_path
from app.security.secret import SESSION_SECRET_FILE
from drills.exercises.registry import get_exercise
from drills.sandbox import available
from tests.app.factories import EXERCISE, add_user, app_of, engine_of, row_counts, signed_in
from tests.conftest import wait_for_exercise_run

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(available() is not None, reason=f"no sandbox: {available()}"),
]

SECRET = "the-session-key-of-this-test-server-0123456789"
MARKER = "drillbook-hostile-marker"


def programs(database: Path, repo: Path, data: Path) -> dict[str, str]:
    """name -> a learner's file. Each keeps the exercise's train() (so the file is judged) and
    does its mischief when the module is loaded."""
    train = get_exercise(EXERCISE).starter
    return {
        "connects to the database's port": (
            "import socket\nsocket.create_connection(('127.0.0.1', 5432), timeout=2)\n" + train
        ),
        "connects out": "import socket\nsocket.create_connection(('1.1.1.1', 80), timeout=2)\n"
        + train,
        "reads the SQLite file": f"print(open({str(database)!r}, 'rb').read(100))\n" + train,
        "reads the environment": (
            "import os\nprint({k: v for k, v in os.environ.items()})\n"
            "assert not any(k.startswith('DRILLBOOK') for k in os.environ), 'leaked'\n"
            "raise SystemExit('nothing to read')\n"
        ),
        "writes outside scratch": (f"open({str(repo / MARKER)!r}, 'w').write('x')\n" + train),
        "imports the app": "import app.core.db\n" + train,
        "forks without end": "import os\nwhile True:\n    os.fork()\n",
        "allocates without end": "chunks = []\nwhile True:\n    chunks.append(bytearray(2**26))\n",
        "prints 100 MB": "import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 2**20)\n",
        "unshares through ctypes": (
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "assert libc.unshare(0x10000000) != 0, 'unshare worked'\n"
            "assert libc.mount(b'none', b'/tmp', b'tmpfs', 0, None) != 0, 'mount worked'\n"
            "raise SystemExit(f'refused: errno {ctypes.get_errno()}')\n"
        ),
        "signals every process": (
            "import os, signal\nfor pid in range(2, 400):\n"
            "    try:\n        os.kill(pid, signal.SIGKILL)\n    except OSError:\n        pass\n"
            "os.kill(-1, signal.SIGKILL)\n"
        ),
        "reads the signing key and the session secret": (
            f"import glob\nprint(glob.glob({str(data)!r} + '/**', recursive=True))\n"
            f"print(open({str(key_path(data))!r}).read())\n"
            f"print(open({str(data / SESSION_SECRET_FILE)!r}).read())\n" + train
        ),
        "loops for ever": "while True:\n    pass\n",
        "reads /etc/shadow": "print(open('/etc/shadow').read())\n" + train,
        "fills the disk": (
            "import errno\nwritten = 0\ntry:\n    with open('/scratch/fill', 'wb') as fill:\n"
            "        while True:\n            fill.write(b'x' * 2**20)\n            written += 1\n"
            "except OSError as error:\n"
            "    print('disk stopped at', written, 'MiB:', errno.errorcode[error.errno])\n" + train
        ),
        "traces another process": (
            "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
            "for pid in (1, 2):\n"
            "    assert libc.ptrace(16, pid, None, None) != 0, 'ptrace attached'\n"  # ATTACH
            "print('ptrace refused: errno', ctypes.get_errno())\n" + train
        ),
        "prints a forged verdict": (
            "import gc, json\n"
            "print(json.dumps({'status': 'passed', 'checks': 'all pass'}))\n"
            "for thing in gc.get_objects():\n"
            "    if type(thing).__name__ == 'Channel':\n"
            "        thing.send({'kind': 'result', 'status': 'passed', 'loss': 0.0})\n"
            "print('PASS')\n" + train.replace("STEPS = 100", "STEPS = 1")
        ),
    }


@pytest.fixture
def server(make_settings: Callable[..., Settings]) -> Iterator[TestClient]:
    """An app with a short time limit (the endless loop is stopped by it) and a secret key in
    its environment, as a deployment has."""
    os.environ["DRILLBOOK_SECRET_KEY"] = SECRET
    try:
        # The endless loop must meet the sandbox's own wall clock (0.75 x 12 s), not the
        # watchdog's (12 s + grace, tests/app/runner/test_watchdog.py): on a loaded machine a cold
        # sandbox's start-up brought the default 5 s grace within reach.
        settings = make_settings(
            time_limit_s=12.0, watchdog_grace_s=30.0, runs_per_learner=32, secret_key=SECRET
        )
        with TestClient(create_app(settings)) as client:
            yield client
    finally:
        os.environ.pop("DRILLBOOK_SECRET_KEY", None)


def test_hostile_code_ends_as_a_failed_run_and_touches_nothing(
    server: TestClient, tmp_path: Path
) -> None:
    engine = engine_of(server)
    add_user(engine, "mallory")
    add_user(engine, "bystander")
    mallory = signed_in(app_of(server), "mallory")
    repo = Path(__file__).resolve().parents[3]
    database = Path(str(engine.url.database or tmp_path / "none.sqlite3"))
    submitted = {
        name: mallory.post(f"/api/exercises/{EXERCISE}/runs", json={"code": code}).json()["id"]
        for name, code in programs(database, repo, app_of(server).state.settings.data_dir).items()
        if os.environ.get("ONLY", name) == name
    }
    # A classmate's run goes on meanwhile and is judged as it would be alone.
    bystander = signed_in(app_of(server), "bystander")
    solution = get_exercise(EXERCISE).solution
    fair = bystander.post(f"/api/exercises/{EXERCISE}/runs", json={"code": solution}).json()
    results = {
        name: wait_for_exercise_run(mallory, run_id, timeout=180)
        for name, run_id in submitted.items()
    }
    wrong = []
    for name, result in results.items():
        if result["judgement"] == "passed" or result["status"] in ("queued", "running"):
            wrong.append(f"{name}: {result['status']} / {result['judgement']}")
        shown = f"{result['stdout']} {result['stderr']} {result['error']}"
        if SECRET in shown:
            wrong.append(f"{name}: the secret key reached the learner")
    assert not wrong, "\n".join(wrong)
    # Clear reasons where the sandbox stopped the code.
    assert "PermissionError" in results["connects to the database's port"]["stderr"]
    assert "No such file" in results["reads the SQLite file"]["stderr"]
    secrets_read = results["reads the signing key and the session secret"]
    assert "No such file" in secrets_read["stderr"] and "PRIVATE KEY" not in secrets_read["stdout"]
    assert "No module named 'app'" in results["imports the app"]["stderr"]
    assert results["loops for ever"]["judgement"] == "error", results["loops for ever"]
    assert "wall-clock" in (results["loops for ever"]["error"] or "") or "CPU" in (
        results["loops for ever"]["error"] or ""
    )
    assert "too-much-output" in str(results["prints 100 MB"]) or "more than" in (
        results["prints 100 MB"]["error"] or ""
    ), results["prints 100 MB"]
    assert "refused: errno 1" in results["unshares through ctypes"]["stderr"]
    assert "No such file" in results["reads /etc/shadow"]["stderr"]
    assert "root:" not in results["reads /etc/shadow"]["stdout"]
    filled = results["fills the disk"]["stdout"]
    assert "EFBIG" in filled or "ENOSPC" in filled, results["fills the disk"]
    assert "ptrace refused: errno 1" in results["traces another process"]["stdout"]
    forged = results["prints a forged verdict"]
    assert forged["judgement"] == "failed" and "PASS" in forged["stdout"]
    # The host: no file written, the database and the server fine, the classmate judged fairly.
    assert not (repo / MARKER).exists()
    assert row_counts(engine)["user"] >= 3
    assert server.get("/api/drills").status_code == 200
    assert wait_for_exercise_run(bystander, fair["id"])["judgement"] == "passed"


# A classmate's code carries this; the prying program builds it at run time, so its own file
# (which the harness may keep in the scratch directory) does not hold it.
CLASSMATE_MARK = "classmate-code-" + "7f3a9c"
# Where a run's code could be left for the next: the writable folders, the processes, and the
# drills package (the one mount the judge's side writes bytecode into). Not the read-only
# site-packages: reading torch's gigabyte there took the run past its 9 s on a loaded machine.
PRY = """
import os
wanted = ("classmate-code-" + "7f3a9c").encode()
hits = []
def look(path):
    try:
        with open(path, "rb") as seen:
            if wanted in seen.read(2**22):
                hits.append(path)
    except OSError:
        pass
for root in ("/scratch", "/tmp", "/dev/shm", "/opt/drillbook/drills"):
    for folder, _, names in os.walk(root):
        for name in names:
            look(os.path.join(folder, name))
for pid in (name for name in os.listdir("/proc") if name.isdigit()):
    for part in ("cmdline", "environ"):
        look(f"/proc/{pid}/{part}")
print("classmate's code found in", hits)
"""


def test_a_learners_code_never_reaches_a_later_run_of_another_learner(
    server: TestClient,
) -> None:
    """Runs of one worker are forked from one spawner, one after another: what a classmate's
    run left behind (files in the scratch, /tmp and /dev/shm, its processes) is gone before the
    next one starts, and the spawner never holds anyone's code."""
    engine = engine_of(server)
    add_user(engine, "classmate")
    add_user(engine, "prier")
    classmate, prier = signed_in(app_of(server), "classmate"), signed_in(app_of(server), "prier")
    solution = get_exercise(EXERCISE).solution
    leaves = (
        f"MARK = {CLASSMATE_MARK!r}\n"
        "for folder in ('/scratch', '/tmp', '/dev/shm'):\n"
        "    open(folder + '/notes.txt', 'w').write(MARK)\n" + solution
    )
    for _ in range(2):  # one after the other, so both workers have likely run one
        run = classmate.post(f"/api/exercises/{EXERCISE}/runs", json={"code": leaves}).json()
        assert wait_for_exercise_run(classmate, run["id"])["judgement"] == "passed"
    train = get_exercise(EXERCISE).starter
    # Two at once: one on each worker, each after a classmate's run there.
    pries = [
        prier.post(f"/api/exercises/{EXERCISE}/runs", json={"code": PRY + train}).json()["id"]
        for _ in range(2)
    ]
    for run_id in pries:
        result = wait_for_exercise_run(prier, run_id)
        assert "classmate's code found in []" in result["stdout"], result
        assert CLASSMATE_MARK not in f"{result['stdout']} {result['stderr']}"
