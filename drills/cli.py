"""`python -m drills list [--json]` and `python -m drills run <slug> [--set k=v]... [--seed N]`."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from drills.core.catalogue import describe
from drills.core.knobs import KnobError
from drills.core.registry import UnknownDrill, all_drills

USAGE_ERROR = 2  # bad request: nothing ran
RUN_FAILED = 1  # the run ended with status error, timed_out or resource_limit


class UsageError(Exception):
    pass


class _Parser(argparse.ArgumentParser):
    # argparse prints a usage block and exits; we want one line the caller can show as is.
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m drills", description="Run Drillbook drills.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    listing = commands.add_parser("list", help="list the drills")
    listing.add_argument("--json", action="store_true", help="print the catalogue as JSON")
    run = commands.add_parser("run", help="run one drill and print its record")
    run.add_argument("slug", help="the drill to run")
    run.add_argument(
        "--set",
        dest="knobs",
        action="append",
        default=[],
        metavar="KNOB=VALUE",
        help="set a knob (repeatable)",
    )
    run.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    run.add_argument("--json", action="store_true", help="print the record as one JSON object")
    return parser


def parse_knob_settings(settings: Sequence[str]) -> dict[str, str]:
    """Turn ["lr=0.01", "bug=none"] into {"lr": "0.01", "bug": "none"}."""
    knobs: dict[str, str] = {}
    for setting in settings:
        name, equals, value = setting.partition("=")
        if not equals or not name.strip():
            raise UsageError(f"--set expects KNOB=VALUE, got {setting!r}")
        if name.strip() in knobs:
            raise UsageError(f"knob {name.strip()!r} is set more than once")
        knobs[name.strip()] = value
    return knobs


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        if args.command == "list":
            return list_drills(as_json=args.json)
        knobs = parse_knob_settings(args.knobs)
        # Imported here so `list` and bad arguments answer without setting up a run.
        from drills.core.runner import run_drill

        record = run_drill(args.slug, knobs, args.seed)
    except (UsageError, UnknownDrill, KnobError, ValueError) as exc:
        print(f"python -m drills: error: {exc}", file=sys.stderr)
        return USAGE_ERROR
    if args.json:
        print(json.dumps(record, allow_nan=False))
    else:
        print_summary(record)
    return 0 if record["status"] == "ok" else RUN_FAILED


def list_drills(*, as_json: bool) -> int:
    drills = [describe(drill) for drill in all_drills()]
    if as_json:
        print(json.dumps(drills, allow_nan=False))
    else:
        for drill in drills:
            print(f"{drill['slug']:<24} {drill['title']} - {drill['summary']}")
    return 0


def print_summary(record: dict[str, Any]) -> None:
    print(f"drill:    {record['drill']} (version {record['drill_version']})")
    print(f"status:   {record['status']}")
    if record["error"]:
        print(f"error:    {record['error']}")
    if record["observed"]:
        print(f"observed: {record['observed']}")
    for key, value in record["signature"].items():
        shown = f"{value:.6g}" if isinstance(value, float) else value
        print(f"  {key:<20} {shown}")
    print(f"digest:   {record['digest']}")
    print(f"compute:  {record['timings']['compute_s']:.3f} s")
    print(f"command:  {record['command']}")
