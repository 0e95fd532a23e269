"""`python -m drills practice ...`: the practice material from the command line.

`practice items [--json]`: every review item's key, topic and prompt.
`practice simulate [--days N] [--new-per-day N] [--seed N]`: a simulated learner's schedule.
`practice rounds [--learner ID] [--days N] [--per-day N]`: a learner's round draws, day by day.
"""

from __future__ import annotations

import argparse
import json
from datetime import date, timedelta

from drills.practice import rounds, simulate
from drills.practice.items import all_items


def add_commands(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    practice = commands.add_parser("practice", help="review items, schedules, round draws")
    actions = practice.add_subparsers(dest="action", required=True, parser_class=type(practice))
    items = actions.add_parser("items", help="list the review items")
    items.add_argument("--json", action="store_true", help="print the items as JSON")
    simulation = actions.add_parser("simulate", help="a simulated learner's review schedule")
    simulation.add_argument("--days", type=int, default=14, help="days to simulate (default 14)")
    simulation.add_argument("--new-per-day", type=int, default=5, help="new items a day")
    simulation.add_argument("--seed", type=int, default=0, help="the learner's luck (default 0)")
    draws = actions.add_parser("rounds", help="a learner's curve-diagnosis rounds, day by day")
    draws.add_argument("--learner", type=int, default=1, help="learner id (default 1)")
    draws.add_argument("--days", type=int, default=7, help="days (default 7)")
    draws.add_argument("--per-day", type=int, default=2, help="rounds a day (default 2)")
    draws.add_argument("--start", type=date.fromisoformat, default=date(2026, 12, 1))


def run(args: argparse.Namespace) -> int:
    for name in ("days", "new_per_day", "per_day"):
        if getattr(args, name, 1) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be at least 1")
    if args.action == "items":
        return _items(as_json=args.json)
    if args.action == "simulate":
        days, histories = simulate.simulate(args.days, new_per_day=args.new_per_day, seed=args.seed)
        print(simulate.render(days, histories))
        return 0
    return _rounds(args.learner, args.start, args.days, args.per_day)


def _items(*, as_json: bool) -> int:
    items = all_items()
    if as_json:
        rows = [
            {
                "key": item.key,
                "topic": item.topic,
                "prompt": item.prompt,
                "answer": item.answer,
                "drills": list(item.drills),
            }
            for item in items
        ]
        print(json.dumps(rows, ensure_ascii=False))
        return 0
    for item in items:
        print(f"{item.key:<30} {item.topic:<10} {item.prompt}")
    print(f"{len(items)} items")
    return 0


def _rounds(learner: int, start: date, days: int, per_day: int) -> int:
    shown: list[tuple[date, str]] = []
    for offset in range(days):
        day = start + timedelta(days=offset)
        for number in range(1, per_day + 1):
            drawn = rounds.draw_round(learner, day, number, rounds.recent_keys(shown, day))
            shown.append((day, drawn.variant.key))
            print(f"{day} #{number}  {drawn.variant.key:<48} seed {drawn.seed}")
    print(f"{len({key for _, key in shown})} distinct variants in {len(shown)} rounds")
    return 0
