"""Operator commands: `python -m app serve | migrate | create-admin USER | set-password USER |
verify-export FILE.json | backup DIR`, and for an external cluster `certs DIR | scheduler |
worker tls://HOST:PORT` (app/cluster_commands.py)."""

import argparse
import getpass
import logging
import sys
from pathlib import Path

import uvicorn
from pydantic import ValidationError
from sqlmodel import Session

from app import cluster_commands
from app.accounts.models import Role
from app.accounts.service import AccountError, create_user, find_user, set_password
from app.core.backup import back_up
from app.core.config import Settings
from app.core.db import make_engine
from app.core.migrate import upgrade
from app.portfolio.verify_cli import verify_export
from app.runner.cluster_config import QUIET_DASK_LOGGERS


def read_password(from_stdin: bool) -> str:
    if from_stdin:
        return sys.stdin.readline().rstrip("\n")
    first = getpass.getpass("Password: ")
    if first != getpass.getpass("Again: "):
        sys.exit("the two passwords differ")
    return first


def configure_logging() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    for name, level in QUIET_DASK_LOGGERS.items():
        logging.getLogger(name).setLevel(level.upper())


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m app")
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the web app (starts the embedded workers)")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    commands.add_parser("migrate", help="upgrade the database to the newest schema")
    for name, text in (
        ("create-admin", "create an admin account (the first one comes from here)"),
        ("set-password", "set the password of an existing account"),
    ):
        command = commands.add_parser(name, help=text)
        command.add_argument("username")
        command.add_argument(
            "--password-stdin", action="store_true", help="read the password from standard input"
        )
    verify = commands.add_parser(
        "verify-export",
        help="check a portfolio export: exit 0 intact, 1 altered (each problem printed), "
        "2 unreadable",
    )
    verify.add_argument("file", help="the export's .json file")
    backup = commands.add_parser(
        "backup",
        help="copy the database (safe while serving), the signing key and a generated session "
        "secret into DIR (private files)",
    )
    backup.add_argument("directory", type=Path)
    cluster_commands.add_parsers(commands)
    args = parser.parse_args()

    if args.command in cluster_commands.NAMES:
        cluster_commands.run(args)  # cluster hosts have no DRILLBOOK_* settings to read
        return
    configure_logging()
    try:
        settings = Settings()
    except ValidationError as error:  # each message names its DRILLBOOK_* variable
        problems = "\n".join(f"  - {problem['msg']}" for problem in error.errors())
        sys.exit(f"configuration refused:\n{problems}")
    if args.command == "verify-export":
        sys.exit(verify_export(args.file, data_dir=settings.data_dir))
    if args.command == "migrate":
        upgrade(settings.database_url)
        return
    if args.command == "backup":
        for written in back_up(settings, args.directory):
            print(f"wrote {written}")
        return
    if args.command == "serve":
        from app.main import create_app

        uvicorn.run(
            create_app(settings),
            host=args.host,
            port=args.port,
            log_level="info",
            # Named, not "auto": without them uvicorn would fall back to asyncio's loop and h11
            # in silence, and the web process would spend ~10 % more CPU per run.
            loop="uvloop",
            http="httptools",
            # uvicorn trusts X-Forwarded-For from 127.0.0.1 by default; only from set proxies here
            # (the login throttle counts failures per client address).
            proxy_headers=settings.forwarded_allow_ips is not None,
            forwarded_allow_ips=settings.forwarded_allow_ips,
        )
        return

    engine = make_engine(settings.database_url)
    with Session(engine) as session:
        try:
            if args.command == "create-admin":
                user = create_user(
                    session,
                    username=args.username,
                    display_name=args.username,
                    password=read_password(args.password_stdin),
                    role=Role.admin,
                )
                print(f"created admin {user.username!r}")
            else:
                account = find_user(session, args.username)
                if account is None:
                    sys.exit(f"no account called {args.username!r}")
                set_password(session, user=account, password=read_password(args.password_stdin))
                print(f"password of {account.username!r} set")
        except AccountError as error:
            sys.exit(f"{error.field}: {error.message}")


if __name__ == "__main__":
    main()
