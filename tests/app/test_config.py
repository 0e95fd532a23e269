"""Settings refuse, at start-up and by name, memory limits that would fail every run."""

import subprocess
import sys

import pytest
from pydantic import ValidationError

from app.config import MIN_WORKER_MEMORY_MB, ROOT, Settings


@pytest.mark.parametrize(
    ("environment", "named"),
    [
        # Below a warm worker's footprint: every run would end resource_limit at its first step.
        ({"DRILLBOOK_MEMORY_LIMIT_MB": "300"}, "DRILLBOOK_MEMORY_LIMIT_MB=300"),
        # The nanny below the footprint kills each worker while it warms up (CommClosedError).
        ({"DRILLBOOK_WORKER_MEMORY_LIMIT": "300MiB"}, "DRILLBOOK_WORKER_MEMORY_LIMIT='300MiB'"),
        # The nanny below the per-run cap kills the worker before the cap can end the run.
        (
            {"DRILLBOOK_MEMORY_LIMIT_MB": "3000", "DRILLBOOK_WORKER_MEMORY_LIMIT": "2GiB"},
            "is below DRILLBOOK_MEMORY_LIMIT_MB (3000 MiB)",
        ),
        ({"DRILLBOOK_WORKER_MEMORY_LIMIT": "plenty"}, "not a size like '4GiB'"),
    ],
)
def test_memory_limits_below_a_warm_worker_are_refused_by_name(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], named: str
) -> None:
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValidationError, match="DRILLBOOK_") as refused:
        Settings()
    assert named in str(refused.value)


@pytest.mark.parametrize(
    ("memory_limit_mb", "worker_memory_limit"),
    [(2048, "4GiB"), (MIN_WORKER_MEMORY_MB, "512MiB"), (1024, "1GiB"), (2048, "auto"), (2048, "0")],
)
def test_workable_memory_limits_are_accepted(
    memory_limit_mb: float, worker_memory_limit: str
) -> None:
    settings = Settings(memory_limit_mb=memory_limit_mb, worker_memory_limit=worker_memory_limit)
    assert settings.memory_limit_mb == memory_limit_mb


def test_the_commands_stop_at_start_up_with_the_variable_named() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "app", "migrate"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "DRILLBOOK_WORKER_MEMORY_LIMIT": "256MB"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "configuration refused" in result.stderr
    assert "DRILLBOOK_WORKER_MEMORY_LIMIT='256MB' is below" in result.stderr
