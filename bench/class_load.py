"""Load test: a class of simulated learners on one Drillbook server.

    python -m bench.class_load --learners 50 --seconds 120
    python -m bench.class_load --learners 10 --seconds 60 --url http://127.0.0.1:8000 \
        --database-url sqlite:////path/to/drillbook.sqlite3

Without --url it starts its own server on a free loopback port (`python -m app serve`, the
embedded default: SQLite in a temporary folder, two local workers) and stops it at the end.

Each learner registers, then until the time is up: opens the catalogue and the drill page, posts a
run, follows its event stream to `done`, opens the attempt page, and pauses a little (a person
reads). The learners arrive one after another over the first `--arrive-over` seconds (10 s), as
a class opens its laptops; `--arrive-over 0` starts all of them in the same instant, which
measures a burst (50 catalogue pages asked at once), not the steady state. Printed at the end:
runs completed, 4xx/5xx answers, streams that ended without `done`, metric points lost or
repeated (what each stream delivered against what the database holds), queue wait (started -
created) and page times. Not a test: the figures go to the README; a smaller run
in tests/app/test_class_load.py asserts only that nothing failed.
"""

import argparse
import json

from support.classroom import ARRIVALS_S, Report, run_class
from support.server import started_server


def print_report(report: Report) -> None:
    summary = report.summary()
    print(
        f"{report.learners} learners arriving over {report.arrive_over_s:g} s, {report.seconds:g} s"
    )
    print(f"  runs completed        {summary['runs_completed']}  {summary['final_statuses']}")
    print(f"  4xx / 5xx             {summary['4xx']} / {summary['5xx']}")
    print(f"  connection errors     {summary['connection_errors']}")
    print(f"  streams without done  {summary['streams_without_done']}")
    print(
        f"  points lost/repeated  {summary['lost_points']} / {summary['repeated_points']}"
        f"  (of {summary['points_checked']} checked against the database)"
    )
    for key, unit in (("queue_wait_s", "s"), ("page_ms", "ms"), ("post_ms", "ms")):
        p = summary[key]
        print(
            f"  {key:20s}  p50 {p['p50']} {unit}  p95 {p['p95']} {unit}  max {p['max']}  n={p['n']}"
        )
    for error in report.connection_errors[:5]:
        print(f"  connection error: {error}")


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.class_load")
    parser.add_argument("--learners", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--think", type=float, default=2.0, help="mean pause between runs (s)")
    parser.add_argument(
        "--arrive-over", type=float, default=ARRIVALS_S, help="learners arrive over (s); 0: at once"
    )
    parser.add_argument("--drill", default="overfit-one-batch")
    parser.add_argument("--url", help="an already running server (default: start one)")
    parser.add_argument("--database-url", help="that server's database, to check the points")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    args = parser.parse_args()
    options = {
        "learners": args.learners,
        "seconds": args.seconds,
        "think_s": args.think,
        "arrive_over_s": args.arrive_over,
    }
    if args.url:
        report = run_class(args.url, database_url=args.database_url, drill=args.drill, **options)
    else:
        with started_server() as server:
            report = run_class(
                server.url, database_url=server.database_url, drill=args.drill, **options
            )
    if args.json:
        print(json.dumps(report.summary(), indent=2))
    else:
        print_report(report)


if __name__ == "__main__":
    main()
