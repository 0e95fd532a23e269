"""The argument lists and DASK_* variables `python -m app scheduler | worker` hand to Dask, read
back the way Dask itself reads them (its click commands, its environment parser)."""

import argparse
import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from distributed.cli import dask_scheduler, dask_worker

from app.cluster_commands import nanny_memory_limit
from app.runner.certificates import make_cluster_certificates, tls_files
from app.runner.cluster_config import EXTERNAL_CLUSTER_CONFIG, WARM_PRELOAD
from app.runner.dask_commands import (
    DaskCommand,
    dask_environment,
    scheduler_command,
    worker_command,
)


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("certs")
    make_cluster_certificates(folder)
    return folder


def dask_parameters(command: DaskCommand) -> dict[str, Any]:
    """What Dask's own CLI makes of the arguments after `python -m dask <subcommand>`."""
    assert command.argv[:3] == [sys.executable, "-m", "dask"]
    subcommand, *arguments = command.argv[3:]
    cli = {"scheduler": dask_scheduler.main, "worker": dask_worker.main}[subcommand]
    params: dict[str, Any] = cli.make_context(subcommand, arguments).params
    return params


def test_the_scheduler_speaks_mutual_tls_with_its_own_certificate_and_no_dashboard(
    certs: Path,
) -> None:
    params = dask_parameters(scheduler_command(certs=certs, host="10.0.0.5", port=8786))
    files = tls_files(certs, "scheduler")
    assert params["protocol"] == "tls"
    assert (params["tls_ca_file"], params["tls_cert"], params["tls_key"]) == (
        str(files.ca),
        str(files.cert),
        str(files.key),
    )
    assert (params["host"], params["port"]) == ("10.0.0.5", "8786")
    assert params["dashboard"] is False
    assert params["dashboard_address"] == "127.0.0.1:0"


def test_workers_take_one_thread_the_warm_up_preload_and_a_memory_limit(certs: Path) -> None:
    command = worker_command(
        scheduler="tls://10.0.0.5:8786", certs=certs, nworkers=3, memory_limit="2GiB"
    )
    params = dask_parameters(command)
    files = tls_files(certs, "worker")
    assert params["scheduler"] == "tls://10.0.0.5:8786"
    assert (params["tls_ca_file"], params["tls_cert"], params["tls_key"]) == (
        str(files.ca),
        str(files.cert),
        str(files.key),
    )
    assert params["nthreads"] == 1
    assert params["n_workers"] == "3"
    assert params["memory_limit"] == "2GiB"
    assert params["preload"] == (WARM_PRELOAD,)
    assert params["nanny"] is True  # a worker that dies is restarted (and warmed up again)
    assert params["dashboard"] is False
    assert params["dashboard_address"] == "127.0.0.1:0"


def test_both_commands_carry_the_cluster_config(certs: Path) -> None:
    scheduler = scheduler_command(certs=certs, host=None, port=8786)
    worker = worker_command(
        scheduler="tls://10.0.0.5:8786", certs=certs, nworkers=1, memory_limit="4GiB"
    )
    assert scheduler.environment == worker.environment == dask_environment(EXTERNAL_CLUSTER_CONFIG)


def with_the_cluster_environment(code: str, *args: str) -> str:
    """What Python code prints in a fresh interpreter with only the external cluster's
    variables set, as `dask scheduler` and `dask worker` start."""
    result = subprocess.run(
        [sys.executable, "-c", code, *args],
        env={"PATH": os.environ["PATH"], **dask_environment(EXTERNAL_CLUSTER_CONFIG)},
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    return result.stdout


def test_dask_reads_the_variables_back_as_the_cluster_config() -> None:
    code = (
        "import json, sys, dask, distributed; "
        "print(json.dumps({key: dask.config.get(key) for key in json.loads(sys.argv[1])}))"
    )
    printed = with_the_cluster_environment(code, json.dumps(list(EXTERNAL_CLUSTER_CONFIG)))
    assert json.loads(printed) == EXTERNAL_CLUSTER_CONFIG
    assert EXTERNAL_CLUSTER_CONFIG["distributed.scheduler.allowed-failures"] == 0
    assert EXTERNAL_CLUSTER_CONFIG["distributed.comm.require-encryption"] is True


def test_the_external_processes_log_no_closed_connection_but_failed_writes() -> None:
    # As `dask scheduler` and `dask worker` start: distributed sets up its logging on import.
    code = (
        "import logging, distributed; "
        "print(logging.getLogger('distributed.batched').getEffectiveLevel(), "
        "logging.getLogger('distributed.scheduler').getEffectiveLevel())"
    )
    # "Batched Comm Closed" (INFO) is left out, "Error in batched write" (ERROR) is not, and the
    # rest of Dask's INFO lines (workers joining and leaving) still show.
    levels = with_the_cluster_environment(code).split()
    assert levels == [str(logging.WARNING), str(logging.INFO)]


def test_a_worker_needs_a_tls_scheduler_address(certs: Path) -> None:
    with pytest.raises(ValueError, match="must start with tls://"):
        worker_command(
            scheduler="tcp://10.0.0.5:8786", certs=certs, nworkers=1, memory_limit="4GiB"
        )


def test_missing_certificate_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=re.escape(str(tmp_path / "scheduler-key.pem"))):
        scheduler_command(certs=tmp_path, host=None, port=8786)


@pytest.mark.parametrize(
    ("limit", "accepted"), [("4GiB", True), ("512MiB", True), ("300MB", False), ("plenty", False)]
)
def test_a_worker_memory_limit_below_a_warm_worker_is_refused(limit: str, accepted: bool) -> None:
    if accepted:
        assert nanny_memory_limit(limit) == limit
    else:
        with pytest.raises(argparse.ArgumentTypeError):
            nanny_memory_limit(limit)
