"""`python -m drills cases ...`: the case pool from the command line.

`cases list`: every case, the share of draws its symptom alone would decide (from the stored
symptom table), and per cause it may hide, the family and the experiments that separate that
cause from the case's other causes (from the stored outcome table).
`cases pairs`: per case, each pair of causes it may hide and the experiments whose readings tell
those two apart, with the symptom's deciding share: a Markdown table per case.
`cases outcomes [--drill SLUG] [--seeds N] [--write]`: rebuild the outcome table from real runs
(seeds 0-9 by default); prints where it differs from the stored one; --write stores it.
`cases symptoms [--drill SLUG] [--write]`: rebuild the symptom table (drills/cases/symptoms.py)
from real runs on seeds 0-4.
`cases symptoms --drill SLUG --nuisance JSON`: the same drill's symptom table rebuilt with other
nuisance ranges (e.g. '{"lr": [0.3, 0.5]}', each replacing that knob's range), never stored:
each of its cases' deciding share, stored against tried. How a change of ranges is tried before
a case set takes it.
`cases symptoms [--drill SLUG] --seeds N [--nuisance JSON]`: the same, on seeds 0..N-1 instead
of the stored table's five: whether a share holds on more draws (a range drawn from five draws
is narrow, and a draw that lies just outside it decides).
`cases why [CASE ...]`: for every draw whose symptom alone decides its case (from the stored
symptom table), what in it each other cause of the case never showed; by default every case
whose symptom decides any draw.
`cases audit [--drill SLUG] [--cause KEY] [--seeds N] [--origin S] [--jobs J]`: every cause of
every case set, run on N random seeds at both ends of every nuisance range: the runs whose
verdict is not the cause's, each with its replay command (drills/cases/audit.py). Exits 1 on a
miss.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import replace

from drills.cases import audit, outcomes, symptoms
from drills.cases.contract import FAMILIES, Case, CaseSet
from drills.cases.registry import UnknownCase, all_case_sets, all_cases, get_case
from drills.core.knobs import KnobError, resolve_knobs


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    cases = commands.add_parser("cases", help="the case pool: list it, rebuild its outcomes")
    actions = cases.add_subparsers(dest="action", required=True, parser_class=type(cases))
    actions.add_parser("list", help="every case with its family and separating experiments")
    actions.add_parser("pairs", help="per case, what separates each pair of its causes")
    rebuild = actions.add_parser("outcomes", help="rebuild the outcome table from real runs")
    rebuild.add_argument("--drill", default=None, help="only the case set of this drill")
    rebuild.add_argument(
        "--seeds",
        type=int,
        default=outcomes.SEEDS,
        help=f"seeds 0..N-1 (default {outcomes.SEEDS}, as the stored tables are built)",
    )
    rebuild.add_argument("--write", action="store_true", help="store the rebuilt table")
    seen = actions.add_parser("symptoms", help="rebuild the symptom table from real runs")
    seen.add_argument("--drill", default=None, help="only the case set of this drill")
    seen.add_argument("--write", action="store_true", help="store the rebuilt table")
    seen.add_argument(
        "--nuisance",
        default=None,
        metavar="JSON",
        help="try other nuisance ranges on one drill (a JSON object); nothing is stored",
    )
    seen.add_argument(
        "--seeds",
        type=int,
        default=None,
        help=f"try seeds 0..N-1 (the stored table has {len(symptoms.SEEDS)}); nothing is stored",
    )
    why = actions.add_parser("why", help="what gives each deciding draw of a case away")
    why.add_argument("case", nargs="*", help="case keys (default: every case that decides)")
    check = actions.add_parser("audit", help="does every cause read as planted on random seeds?")
    check.add_argument("--drill", default=None, help="only the case set of this drill")
    check.add_argument("--cause", default=None, help="only this cause")
    check.add_argument("--seeds", type=int, default=10, help="random seeds per setting (10)")
    check.add_argument(
        "--origin",
        type=int,
        default=audit.ORIGIN,
        help=f"seed of the random seeds (default {audit.ORIGIN}): another draws other seeds",
    )
    check.add_argument("--jobs", type=int, default=1, help="runs at a time (one core each)")


def separating_experiments(case: Case, cause: str) -> list[str]:
    """The experiments that tell `cause` from every other cause the case may hide."""
    others = [other for other in case.causes if other != cause]
    return [
        experiment.key
        for experiment in case.case_set.experiments
        if outcomes.separates(case.case_set, experiment.key, cause, others)
    ]


def pair_table(case: Case) -> list[str]:
    """A Markdown table: each pair of the case's causes, and the experiments that separate it."""
    share = symptoms.case_share(case)
    lines = [
        f"### {case.key} ({case.case_set.drill}; the symptom decides {share:.0%} of draws)",
        "",
        "| cause | look-alike | experiments that tell them apart |",
        "|---|---|---|",
    ]
    for index, cause in enumerate(case.causes):
        for other in case.causes[index + 1 :]:
            separating = [
                experiment.key
                for experiment in case.case_set.experiments
                if outcomes.separates(case.case_set, experiment.key, cause, [other])
            ]
            lines.append(f"| {cause} | {other} | {', '.join(separating) or '(none)'} |")
    return [*lines, ""]


def why_lines(case: Case) -> list[str]:
    """Each draw whose symptom alone decides the case, and against every other cause of the
    case, what in that draw the other never showed."""
    table = symptoms.stored_table().get(case.case_set.drill, {})
    share = symptoms.case_share(case)
    lines = [f"{case.key} ({case.case_set.drill}; the symptom decides {share:.0%} of draws)"]
    settings = symptoms.draws(case.case_set)  # the table's draws, in order
    for cause in case.causes:
        others = [other for other in case.causes if other != cause]
        for index, draw in enumerate(table.get(cause, ())):
            found = {other: list(symptoms.outside(draw, table.get(other, ()))) for other in others}
            if all(found.values()):
                seed, nuisance = settings[index]
                lines.append(f"  {cause}, draw {index} (seed {seed}, {nuisance}), decides:")
                lines += [f"    not {other}: {'; '.join(why)}" for other, why in found.items()]
    return lines


def run_audit(args: argparse.Namespace) -> int:
    chosen = [case_set for case_set in all_case_sets() if args.drill in (None, case_set.drill)]
    entries = [entry for entry in audit.planted(chosen) if args.cause in (None, entry.cause)]
    if not entries or args.seeds < 1 or args.jobs < 1:
        print("nothing to audit: check --drill, --cause, --seeds and --jobs")
        return 2
    seeds = audit.random_seeds(args.seeds, args.origin)
    missed = 0
    for row in audit.audit(entries, seeds, jobs=args.jobs):
        shown = row.runs - len(row.misses)
        verdict = row.planted.verdict
        print(f"{row.planted.label()}: {verdict} on {shown} of {row.runs}", flush=True)
        for miss in row.misses:
            print(f"    read {miss.reading}: {miss.command} --json", flush=True)
        missed += len(row.misses)
    runs = len(entries) * len(seeds)
    print(f"{missed} of {runs} runs did not read as their planted cause (seeds from {args.origin})")
    return 1 if missed else 0


def run(args: argparse.Namespace) -> int:
    if args.action == "audit":
        return run_audit(args)
    if args.action == "why":
        try:
            chosen = [get_case(key) for key in args.case] or [
                case for case in all_cases() if symptoms.case_share(case) > 0
            ]
        except UnknownCase as unknown:
            print(f"{unknown}: `python -m drills cases list` names them all")
            return 2
        for case in chosen:
            print("\n".join(why_lines(case)))
        return 0
    if args.action == "pairs":
        for case in all_cases():
            print("\n".join(pair_table(case)))
        return 0
    if args.action == "list":
        for case in all_cases():
            share = symptoms.case_share(case)
            print(f"{case.key}  ({case.case_set.drill}; symptom decides {share:.0%} of draws)")
            for cause in case.causes:
                family = FAMILIES[case.case_set.cause(cause).family]
                separating = ", ".join(separating_experiments(case, cause)) or "(none alone)"
                print(f"    {cause:<30} {family:<48} {separating}")
        print(f"{len(all_cases())} cases")
        return 0
    if args.action == "symptoms" and (args.nuisance is not None or args.seeds is not None):
        return try_symptoms(args.drill, args.nuisance, args.seeds, args.write)
    module = outcomes if args.action == "outcomes" else symptoms
    stored = module.stored_table()
    # Only the drills rebuilt here are written: a long rebuild must not put back another
    # drill's rows as they stood when it started.
    table: dict[str, object] = {}
    changed = 0
    for case_set in all_case_sets():
        if args.drill and case_set.drill != args.drill:
            continue
        rebuilt = (
            outcomes.build(case_set, range(args.seeds))
            if args.action == "outcomes"
            else symptoms.build(case_set)
        )
        if rebuilt != stored.get(case_set.drill):
            changed += 1
            print(f"{case_set.drill}: {json.dumps(rebuilt, sort_keys=True)}")
        table[case_set.drill] = rebuilt
    if args.write:
        module.write_table(table)
    print(
        f"{changed} case set(s) differ from the stored table" + (" (written)" if args.write else "")
    )
    return 0


def try_symptoms(drill: str | None, given: str | None, seeds: int | None, write: bool) -> int:
    """Rebuild symptom tables in memory, with other nuisance ranges on one drill or on more
    seeds, and print each case's deciding share, stored and tried (see the module's text)."""
    if write:
        print("--nuisance and --seeds store nothing (--write is refused with them)")
        return 2
    if given is not None and drill is None:
        print("--nuisance needs --drill: its knobs are one drill's")
        return 2
    if seeds is not None and seeds < 1:
        print("--seeds needs at least 1 seed")
        return 2
    sets = [case_set for case_set in all_case_sets() if drill in (None, case_set.drill)]
    if not sets:
        print(f"no case set stands on drill {drill!r}")
        return 2
    if given is not None:
        tried = tried_nuisance(sets[0], given)
        if tried is None:
            return 2
        sets = [tried]
    chosen = range(seeds) if seeds is not None else symptoms.SEEDS
    for case_set in sets:
        table = symptoms.build(case_set, chosen)
        print(f"{case_set.drill}, nuisance {dict(case_set.nuisance)}, seeds {_span(chosen)}:")
        for case in all_cases():
            if case.case_set.drill == case_set.drill:
                before = symptoms.case_share(case)
                after = symptoms.deciding_share(case.causes, table)
                print(f"  {case.key:<32} stored {before:.3g}  tried {after:.3g}", flush=True)
    return 0


def _span(seeds: Sequence[int]) -> str:
    return f"{seeds[0]}-{seeds[-1]}" if len(seeds) > 1 else str(seeds[0])


def tried_nuisance(case_set: CaseSet, given: str) -> CaseSet | None:
    """The case set with the given nuisance ranges, or None after saying what is wrong."""
    try:
        ranges = json.loads(given)
    except json.JSONDecodeError as error:
        print(f"--nuisance is not JSON: {error}")
        return None
    if not isinstance(ranges, dict) or not all(
        isinstance(values, list) and values for values in ranges.values()
    ):
        print('--nuisance must map knob names to lists of values, e.g. {"lr": [0.3, 0.5]}')
        return None
    try:  # every value, before a run: a bad last value would otherwise stop a long rebuild late
        for name, values in ranges.items():
            for value in values:
                resolve_knobs(case_set.drill_object, {name: value})
    except KnobError as error:
        print(f"--nuisance: {error}")
        return None
    return replace(
        case_set,
        nuisance={**case_set.nuisance, **{name: tuple(v) for name, v in ranges.items()}},
    )
