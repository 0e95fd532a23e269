"""The drills command line.

`python -m drills list [--json]`: the catalogue.
`python -m drills run <slug> [--set k=v]... [--seed N] [--json]`: one run and its record.
`python -m drills verdicts [--seeds N] [--drill SLUG] [--json]`: each variant's verdict on seeds
0..N-1, rows where the seeds disagree marked.
`python -m drills cases list | outcomes`: the case pool (drills/cases/cli.py).
`python -m drills practice items | simulate | rounds`: review items and schedules
(drills/practice/cli.py).
`python -m drills exercise list | show | run`: code exercises (drills/exercises/cli.py).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, NoReturn

from drills.cases import cli as case_commands
from drills.core.catalogue import describe
from drills.core.contract import Drill
from drills.core.knobs import KnobError
from drills.core.registry import UnknownDrill, all_drills, get_drill
from drills.exercises import cli as exercise_commands
from drills.exercises.registry import UnknownExercise
from drills.practice import cli as practice_commands

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
    verdicts = commands.add_parser(
        "verdicts", help="run every variant on several seeds and print its verdicts"
    )
    verdicts.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    verdicts.add_argument("--drill", dest="slug", default=None, help="only this drill")
    verdicts.add_argument("--json", action="store_true", help="print the table as JSON")
    case_commands.add_commands(commands)
    practice_commands.add_commands(commands)
    exercise_commands.add_commands(commands)
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
        if args.command == "verdicts":
            return print_verdicts(args.slug, args.seeds, as_json=args.json)
        if args.command == "cases":
            return case_commands.run(args)
        if args.command == "practice":
            return practice_commands.run(args)
        if args.command == "exercise":
            return exercise_commands.run(args)
        knobs = parse_knob_settings(args.knobs)
        # Imported here so `list` and bad arguments answer without setting up a run.
        from drills.core.runner import run_drill

        record = run_drill(args.slug, knobs, args.seed)
    except (UsageError, UnknownDrill, UnknownExercise, KnobError, ValueError, OSError) as exc:
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


def variants(drill: Drill) -> list[dict[str, Any]]:
    """The default knobs, then each other value of each knob with a few allowed values (the
    other knobs at their defaults)."""
    rows: list[dict[str, Any]] = [{}]
    for knob in drill.knobs:
        if knob.choices:
            rows.extend({knob.name: choice} for choice in knob.choices if choice != knob.default)
    return rows


def verdict_table(slug: str | None, seeds: int) -> list[dict[str, Any]]:
    """One row per drill variant: its knobs, the verdict per seed, and whether the seeds agree.

    A run that produced no numbers shows its status (e.g. "error") in place of a verdict."""
    if seeds < 1:
        raise UsageError(f"--seeds must be at least 1, got {seeds}")
    from drills.core.runner import run_drill

    drills = [get_drill(slug)] if slug else list(all_drills())
    rows = []
    for drill in drills:
        for knobs in variants(drill):
            verdicts = []
            for seed in range(seeds):
                record = run_drill(drill.slug, knobs, seed)
                verdicts.append(record["observed"] or record["status"])
            rows.append(
                {
                    "drill": drill.slug,
                    "knobs": knobs,
                    "verdicts": verdicts,
                    "agree": len(set(verdicts)) == 1,
                }
            )
    return rows


def print_verdicts(slug: str | None, seeds: int, *, as_json: bool) -> int:
    rows = verdict_table(slug, seeds)
    if as_json:
        print(json.dumps(rows, allow_nan=False))
        return 0
    for row in rows:
        knobs = " ".join(f"{name}={value}" for name, value in row["knobs"].items()) or "(defaults)"
        verdicts = sorted(set(row["verdicts"]), key=row["verdicts"].index)
        shown = verdicts[0] if row["agree"] else " / ".join(row["verdicts"])
        mark = " " if row["agree"] else "*"
        print(f"{mark} {row['drill']:<22} {knobs:<34} {shown}")
    disagree = sum(not row["agree"] for row in rows)
    print(f"{len(rows)} variants x {seeds} seeds; {disagree} where the seeds disagree (*)")
    return 0
