"""`python -m drills exercise ...`: the code exercises from the command line.

`exercise list`: every exercise, its drill and title.
`exercise show SLUG [--solution]`: the story and the starter (the solution only when asked).
`exercise run SLUG --code FILE --seed N [--json]`: judge a file in the real sandbox; says so and
exits non-zero when no sandbox can start here.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from drills.exercises.contract import Judgement
from drills.exercises.registry import all_exercises, get_exercise

NOT_PASSED = 1  # the file ran and did not pass, or could not be judged


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    exercise = commands.add_parser("exercise", help="code exercises: list, show, run")
    actions = exercise.add_subparsers(dest="action", required=True, parser_class=type(exercise))
    actions.add_parser("list", help="every code exercise")
    show = actions.add_parser("show", help="an exercise's story and starter file")
    show.add_argument("slug")
    show.add_argument("--solution", action="store_true", help="also print the reference solution")
    run = actions.add_parser("run", help="judge a file in the sandbox")
    run.add_argument("slug")
    run.add_argument("--code", required=True, metavar="FILE", help="the learner's file")
    run.add_argument("--seed", type=int, default=0, help="the seed the hidden seeds derive from")
    run.add_argument("--json", action="store_true", help="print the judgement as JSON")


class _Points:
    """The live curve, counted (a terminal has nowhere to draw it)."""

    def __init__(self) -> None:
        self.count = 0

    def metric(self, name: str, step: int, value: float) -> None:
        self.count += 1


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        for exercise in all_exercises():
            print(f"{exercise.slug:<26} {exercise.drill:<22} {exercise.kind:<6} {exercise.title}")
        return 0
    exercise = get_exercise(args.slug)
    if args.action == "show":
        print(f"# {exercise.title}\n\n{exercise.story.strip()}\n")
        print(f"--- starter.py ---\n{exercise.starter}")
        if args.solution:
            print(f"--- solution.py ---\n{exercise.solution}")
        return 0

    code = Path(args.code).read_text(encoding="utf-8")
    try:
        from drills.sandbox import run as sandbox_run
    except ImportError as exc:
        print(f"python -m drills: the sandbox is not available here ({exc})", file=sys.stderr)
        return NOT_PASSED
    from drills.exercises.judge import judge

    judgement = judge(exercise, code, args.seed, report=_Points(), run=sandbox_run)
    if judgement.status == "error" and judgement.message and "sandbox" in judgement.message:
        print(f"python -m drills: {judgement.message}", file=sys.stderr)
    if args.json:
        print(json.dumps(judgement.as_dict(), allow_nan=False))
    else:
        print_judgement(judgement)
    return 0 if judgement.status == "passed" else NOT_PASSED


def print_judgement(judgement: Judgement) -> None:
    print(f"exercise: {judgement.exercise} (seed {judgement.seed})")
    print(f"status:   {judgement.status}")
    if judgement.message:
        print(f"message:  {judgement.message}")
    for check in judgement.checks:
        print(f"  [{check.status:<5}] {check.title}\n          {check.message}")
    if judgement.verdict_text:
        print(f"the drill reads it as: {judgement.verdict} - {judgement.verdict_text}")
    print(f"wall:     {judgement.wall_s:.2f} s")
