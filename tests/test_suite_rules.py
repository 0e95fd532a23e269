"""Rules the tests keep so that they pass in any order and in any test process."""

from pathlib import Path

TESTS = Path(__file__).parent


def test_no_test_runs_a_coroutine_in_the_main_thread() -> None:
    """`asyncio.run` in the main thread fails once the browser tests' Playwright session runs
    its loop there, as it does for the rest of the process: tests.aio.run_to_end instead."""
    calls = [
        f"{path.relative_to(TESTS)}:{number}"
        for path in TESTS.rglob("*.py")
        if path.name != "aio.py"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "asyncio.run(" in line and "def " not in line
    ]
    assert calls == []
