"""`python -m drills cases ...`: the case pool from the command line.

`cases list`: every case, its cause family and the experiments that separate its cause from the
other causes of its set (from the stored outcome table).
`cases outcomes [--drill SLUG] [--seeds N] [--write]`: rebuild the outcome table from real runs;
prints where it differs from the stored one; --write stores it.
"""

from __future__ import annotations

import argparse
import json

from drills.cases import outcomes
from drills.cases.contract import FAMILIES, Case
from drills.cases.registry import all_case_sets, all_cases


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cases = commands.add_parser("cases", help="the case pool: list it, rebuild its outcomes")
    actions = cases.add_subparsers(dest="action", required=True, parser_class=type(cases))
    actions.add_parser("list", help="every case with its family and separating experiments")
    rebuild = actions.add_parser("outcomes", help="rebuild the outcome table from real runs")
    rebuild.add_argument("--drill", default=None, help="only the case set of this drill")
    rebuild.add_argument("--seeds", type=int, default=2, help="seeds 0..N-1 (default 2)")
    rebuild.add_argument("--write", action="store_true", help="store the rebuilt table")


def separating_experiments(case: Case) -> list[str]:
    """The experiments that tell this case's cause from every other cause of its set."""
    others = [cause.key for cause in case.case_set.causes if cause.key != case.cause]
    return [
        experiment.key
        for experiment in case.case_set.experiments
        if outcomes.separates(case.case_set, experiment.key, case.cause, others)
    ]


def run(args: argparse.Namespace) -> int:
    if args.action == "list":
        for case in all_cases():
            family = FAMILIES[case.family]
            separating = ", ".join(separating_experiments(case)) or "(none alone)"
            print(f"{case.key:<28} {case.case_set.drill:<22} {family:<48} {separating}")
        print(f"{len(all_cases())} cases")
        return 0
    table = dict(outcomes.stored_table())
    changed = 0
    for case_set in all_case_sets():
        if args.drill and case_set.drill != args.drill:
            continue
        rebuilt = outcomes.build(case_set, range(args.seeds))
        if rebuilt != table.get(case_set.drill):
            changed += 1
            print(f"{case_set.drill}: {json.dumps(rebuilt, sort_keys=True)}")
        table[case_set.drill] = rebuilt
    if args.write:
        outcomes.write_table(table)
    print(
        f"{changed} case set(s) differ from the stored table" + (" (written)" if args.write else "")
    )
    return 0
