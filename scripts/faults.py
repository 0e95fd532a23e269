"""Bring back known, fixed bugs one at a time and run the tests that guard each one.

    .venv/bin/python scripts/faults.py [NAME ...]          (from a checkout's root)

For a change to the test suite: every fault here must still fail its tests, before and after
(issue 23). Each fault is a small edit of one file that undoes a fix from the history (the CSRF
check an import clean-up dropped, the review race, the pool keeper, ...); the file is restored
whatever happens. Prints one line per fault: caught (with the first failing test) or MISSED.
Not a test: it edits the working tree while it runs, so run it on a clean checkout.
"""

import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Fault:
    file: str
    fixed: str  # the code as it is
    broken: str  # the code with the bug back
    tests: tuple[str, ...]


FAULTS = {
    "csrf-check-dropped": Fault(
        "app/security/csrf.py",
        "    if not isinstance(expected, str) or sent is None"
        " or not secrets.compare_digest(sent, expected):",
        "    if False:",
        ("tests/app/test_csrf.py",),
    ),
    "review-race": Fault(
        "app/grading/rubric.py",
        "        session.rollback()\n        raise already_decided from None",
        "        session.rollback()\n        return",
        ("tests/app/test_races.py",),
    ),
    "pool-keeper-no-rescale": Fault(
        "app/runner/pool.py",
        "            cluster.scale(self._wanted)",
        "            pass",
        ("tests/app/runner/test_pool_keeper.py",),
    ),
    "stream-resume-repeats-a-point": Fault(
        "app/runs/point_reads.py",
        "WHERE attempt_id = :attempt_id AND id > :cursor",
        "WHERE attempt_id = :attempt_id AND id >= :cursor",
        ("tests/app/runs/test_stream_reads.py", "tests/app/runs/test_streams.py"),
    ),
    "case-command-before-verdict": Fault(
        "app/cases/views.py",
        '    if revealed:\n        view["command"] = attempt.command',
        '    if True:\n        view["command"] = attempt.command',
        ("tests/app/cases/test_cases.py::test_nothing_names_the_cause_before_the_verdict",),
    ),
    "verdict-boundary-contained": Fault(
        "drills/catalog/loss_spikes/__init__.py",
        "CONTAINED_AT = 0.7\n",
        "CONTAINED_AT = 0.9\n",
        ("tests/drills/test_loss_spikes.py",),
    ),
    "markdown-raw-html-passes": Fault(
        "app/web/markdown.py",
        '{"html": False, "linkify": False}',
        '{"html": True, "linkify": False}',
        ("tests/app/web/test_markdown.py", "tests/app/test_escaping.py"),
    ),
    "portfolio-signature-unchecked": Fault(
        "app/portfolio/signing.py",
        "            embedded.verify(value, canonical_bytes(signed_payload(document)))",
        "            del value",
        ("tests/app/portfolio/test_portfolio_verify.py", "tests/app/portfolio/test_portfolio.py"),
    ),
    "housekeeping-ignores-restart": Fault(
        "app/runs/housekeeping.py",
        "    if scheduler_id is not None and attempt.scheduler_id != scheduler_id:",
        "    if False:",
        ("tests/app/runs/test_housekeeping.py",),
    ),
    "workers-take-sigint": Fault(
        "app/runner/warm_preload.py",
        "    signal.signal(signal.SIGINT, signal.SIG_IGN)",
        "    pass",
        ("tests/app/test_shutdown.py",),
    ),
    "login-throttle-off-by-one": Fault(
        "app/security/throttle.py",
        "            .offset(limit.max_failures - 1)",
        "            .offset(limit.max_failures)",
        ("tests/app/security/test_throttle.py", "tests/app/accounts/test_accounts.py"),
    ),
    "cheap-production-hashes": Fault(
        "app/security/passwords.py",
        "_hasher = PasswordHash.recommended()",
        "from pwdlib.hashers.argon2 import Argon2Hasher\n\n"
        "_hasher = PasswordHash((Argon2Hasher(time_cost=1, memory_cost=1024, parallelism=1),))",
        ("tests/app/accounts/test_accounts.py",),
    ),
}


def check(name: str) -> str:
    fault = FAULTS[name]
    path = ROOT / fault.file
    original = path.read_text()
    if original.count(fault.fixed) != 1:
        return f"{name:32} the code to break is not in {fault.file} (once): update this fault"
    path.write_text(original.replace(fault.fixed, fault.broken))
    try:
        started = time.monotonic()
        result = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", *fault.tests],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        took = time.monotonic() - started
    finally:
        path.write_text(original)
    # pytest's summary lines ("FAILED tests/..."), not a captured log's "ERROR    app...".
    failed = [
        line for line in result.stdout.splitlines() if line.startswith(("FAILED ", "ERROR tests"))
    ]
    verdict = "caught" if result.returncode != 0 else "MISSED"
    return f"{name:32} {verdict:7} {took:5.1f} s  {failed[0][:100] if failed else ''}"


if __name__ == "__main__":
    for name in sys.argv[1:] or FAULTS:
        print(check(name), flush=True)
