"""Operator commands for an external cluster (deploy/README.md, "External cluster"):
`certs DIR`, `scheduler --certs DIR`, `worker tls://HOST:PORT --certs DIR`.

None of them reads DRILLBOOK_* settings or the database: they run on cluster hosts, which need
only the app's code and the certificate files of their role.
"""

import argparse
import sys
from pathlib import Path

from dask.utils import parse_bytes

from app.core.config import MIB, MIN_WORKER_MEMORY_MB
from app.runner.certificates import CA_FILE, DEFAULT_HOSTS, make_cluster_certificates, tls_files
from app.runner.dask_commands import DEFAULT_SCHEDULER_PORT, scheduler_command, worker_command

NAMES = ("certs", "scheduler", "worker")


def nanny_memory_limit(text: str) -> str:
    """A limit the nanny can hold a warm worker to (app/core/config.py: MIN_WORKER_MEMORY_MB)."""
    try:
        limit = int(parse_bytes(text))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a size like '4GiB'") from None
    if limit < MIN_WORKER_MEMORY_MB * MIB:
        raise argparse.ArgumentTypeError(
            f"{text!r} is below {MIN_WORKER_MEMORY_MB} MiB: the nanny would kill every worker "
            "while it warms up"
        )
    return text


def add_parsers(commands: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    certs = commands.add_parser(
        "certs",
        help="make a private CA and mutual-TLS certificates for the scheduler, the workers and "
        "the web servers in DIR (keys 0600)",
    )
    certs.add_argument("directory", type=Path)
    certs.add_argument(
        "--hosts",
        default=",".join(DEFAULT_HOSTS),
        help="comma-separated names and IP addresses of the scheduler and worker hosts "
        "(subjectAltNames; default %(default)s)",
    )
    scheduler = commands.add_parser(
        "scheduler", help="run a Dask scheduler for Drillbook (mutual TLS, no retries)"
    )
    scheduler.add_argument("--host", help="address to listen on (default: every interface)")
    scheduler.add_argument("--port", type=int, default=DEFAULT_SCHEDULER_PORT)
    scheduler.add_argument("--certs", type=Path, required=True, help="the `certs` directory")
    worker = commands.add_parser(
        "worker", help="run Drillbook's Dask workers (one thread each, warmed up, mutual TLS)"
    )
    worker.add_argument("scheduler_address", metavar="tls://HOST:PORT")
    worker.add_argument("--certs", type=Path, required=True, help="the `certs` directory")
    worker.add_argument("--nworkers", type=int, default=1, help="worker processes (default 1)")
    worker.add_argument(
        "--memory-limit",
        type=nanny_memory_limit,
        default="4GiB",
        help="per worker process; the nanny restarts a worker above it (default %(default)s)",
    )
    worker.add_argument(
        "--host", help="address to serve on, reachable from the scheduler and other workers"
    )


def run(args: argparse.Namespace) -> None:
    """`certs` returns; `scheduler` becomes Dask's process and `worker` runs Dask's as long as it
    is not stopped: neither returns."""
    try:
        if args.command == "certs":
            hosts = [host.strip() for host in args.hosts.split(",") if host.strip()]
            make_cluster_certificates(args.directory, hosts)
            print_where_files_go(args.directory)
            return
        if args.command == "scheduler":
            command = scheduler_command(certs=args.certs, host=args.host, port=args.port)
        else:
            command = worker_command(
                scheduler=args.scheduler_address,
                certs=args.certs,
                nworkers=args.nworkers,
                memory_limit=args.memory_limit,
                host=args.host,
            )
    except (OSError, ValueError) as error:
        sys.exit(f"{args.command}: {error}")
    if args.command == "worker":
        command.run_again_until_stopped()
    command.replace_this_process()


def print_where_files_go(directory: Path) -> None:
    scheduler = tls_files(directory, "scheduler")
    worker = tls_files(directory, "worker")
    client = tls_files(directory, "client")
    print(f"wrote certificates to {directory} (keys are private: mode 0600, never shared)")
    print(f"  {CA_FILE}: every host: scheduler, workers and web servers")
    print(
        f"  {scheduler.cert.name}, {scheduler.key.name}: the scheduler host "
        f"(python -m app scheduler --certs DIR)"
    )
    print(
        f"  {worker.cert.name}, {worker.key.name}: every worker host "
        f"(python -m app worker tls://SCHEDULER:{DEFAULT_SCHEDULER_PORT} --certs DIR)"
    )
    print(
        f"  {client.cert.name}, {client.key.name}: every web server "
        f"(DRILLBOOK_TLS_CA_FILE=DIR/{CA_FILE} DRILLBOOK_TLS_CERT_FILE=DIR/{client.cert.name} "
        f"DRILLBOOK_TLS_KEY_FILE=DIR/{client.key.name})"
    )
    print(
        "the CA's private key was not kept: nobody can sign another certificate; to replace "
        "one, make a new set in another directory"
    )
