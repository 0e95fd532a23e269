"""Tests that share a fixture wider than a test run in one test process (tests/groups.py)."""

import re
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).parent
# Of the module's eleven tests, these four share its module-scoped `rows` (one model's audit).
SHARING = {
    "test_rows_have_exactly_the_audit_keys",
    "test_a_frozen_parameter_has_no_grad_and_does_not_move",
    "test_a_parameter_left_out_of_the_optimizer_gets_grads_but_no_updates",
    "test_an_optimized_parameter_moves",
}


def test_tests_sharing_a_module_fixture_run_in_one_process() -> None:
    """As `make test` runs them. xdist's own grouping had stopped working without a word
    (pytest-dev/pytest-xdist#1386), and handed these four out alternately to both processes."""
    ran = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v"]
        + ["-p", "no:cacheprovider", str(TESTS / "drills" / "test_diagnostics.py")],
        capture_output=True,
        text=True,
        timeout=240,
        cwd=TESTS.parent,
    )
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
    process_of = {
        name: process for process, name in re.findall(r"\[(gw\d)\] .*PASSED \S+::(\w+)", ran.stdout)
    }
    assert SHARING <= set(process_of), ran.stdout[-2000:]
    assert len({process_of[name] for name in SHARING}) == 1, process_of
    assert len(set(process_of.values())) == 2, process_of  # and the rest was spread
