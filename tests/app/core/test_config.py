"""Settings refuse, at start-up and by name, memory limits that would fail every run."""

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import ValidationError

from app.core.config import MIN_WORKER_MEMORY_MB, ROOT, Settings


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


TLS_VARIABLES = ("DRILLBOOK_TLS_CA_FILE", "DRILLBOOK_TLS_CERT_FILE", "DRILLBOOK_TLS_KEY_FILE")


def test_a_tls_scheduler_without_its_certificates_is_refused_naming_the_variables() -> None:
    with pytest.raises(ValidationError) as refused:
        Settings(scheduler_address="tls://10.0.0.5:8786")
    for name in ("DRILLBOOK_SCHEDULER_ADDRESS=tls://10.0.0.5:8786", *TLS_VARIABLES):
        assert name in str(refused.value)


def test_certificate_files_that_do_not_exist_are_refused_by_name(tmp_path: Path) -> None:
    (tmp_path / "ca.pem").touch()
    (tmp_path / "client.pem").touch()
    with pytest.raises(ValidationError) as refused:
        Settings(
            scheduler_address="tls://10.0.0.5:8786",
            tls_ca_file=tmp_path / "ca.pem",
            tls_cert_file=tmp_path / "client.pem",
            tls_key_file=tmp_path / "client-key.pem",
        )
    assert f"no such file: DRILLBOOK_TLS_KEY_FILE={tmp_path / 'client-key.pem'}" in str(
        refused.value
    )


def test_a_tls_scheduler_with_its_certificates_is_accepted(tmp_path: Path) -> None:
    files = {name: tmp_path / name for name in ("ca.pem", "client.pem", "client-key.pem")}
    for path in files.values():
        path.touch()
    settings = Settings(
        scheduler_address="tls://10.0.0.5:8786",
        tls_ca_file=files["ca.pem"],
        tls_cert_file=files["client.pem"],
        tls_key_file=files["client-key.pem"],
    )
    assert settings.tls_key_file == files["client-key.pem"]


def test_the_server_stops_at_start_up_without_the_tls_files() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "app", "serve"],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "DRILLBOOK_SCHEDULER_ADDRESS": "tls://10.0.0.5:8786"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "configuration refused" in result.stderr
    assert all(name in result.stderr for name in TLS_VARIABLES)
