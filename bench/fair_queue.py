"""One learner floods the queue while a class works: the class's queue wait with and without.

    python -m bench.fair_queue --learners 20 --seconds 60 [--flood-steps 2000]

Starts its own server on a free loopback port (the embedded default: SQLite, two workers). The
same class works on it twice for --seconds each (bench.class_load's learners: catalogue, drill
page, a run followed to its end, the attempt page, a pause): first alone, then while one more
learner posts runs of --flood-steps steps (2000: seconds each, ten times the class's) as fast as
the server takes them, asking again a quarter of a second after each 429. Printed: the class's
queue wait (started - created) in each window, the ratio of the p95s (the target: within
1.5 x), and the flooder's posts taken and refused. Not a test: the figures go to the README;
tests/app/runs/test_fair_share.py asserts the order runs start in.
"""

import argparse
import json
import threading
import time
import urllib.error
from typing import Any

from support.classroom import PASSWORD, Report, register_class, teach
from support.learner import Session
from support.server import started_server

FLOOD = {
    "drill": "overfit-one-batch",
    "hypothesis": "fits",
    "prediction": "flooding the queue",
    "knobs": {"steps": 2000},
}
RETRY_S = 0.25


class Flooder:
    def __init__(self, url: str, steps: int) -> None:
        self.session = Session.registered(url, "flooder", PASSWORD)
        self.body = FLOOD | {"knobs": {"steps": steps}}
        self.taken = 0
        self.refused: dict[int, int] = {}

    def flood_until(self, deadline: float) -> None:
        seed = 0
        while time.monotonic() < deadline:
            try:
                self.session.post_json("/api/attempts", self.body | {"seed": seed})
                self.taken += 1
                seed += 1
            except urllib.error.HTTPError as error:
                self.refused[error.code] = self.refused.get(error.code, 0) + 1
                error.close()
                time.sleep(RETRY_S)


def window(class_list: list[Any], seconds: float, flooder: Flooder | None) -> Report:
    report = Report(learners=len(class_list), seconds=seconds)
    for learner in class_list:
        learner.report = report
    thread = None
    if flooder is not None:
        deadline = time.monotonic() + seconds
        thread = threading.Thread(target=flooder.flood_until, args=(deadline,), daemon=True)
        thread.start()
    teach(class_list, seconds)
    if thread is not None:
        thread.join()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.fair_queue")
    parser.add_argument("--learners", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--think", type=float, default=2.0, help="mean pause between runs (s)")
    parser.add_argument("--flood-steps", type=int, default=2000, help="steps of each flood run")
    args = parser.parse_args()
    with started_server() as server:
        scratch = Report(learners=args.learners, seconds=args.seconds)
        class_list = register_class(
            server.url, scratch, drill="overfit-one-batch", think_s=args.think
        )
        alone = window(class_list, args.seconds, None)
        flooder = Flooder(server.url, args.flood_steps)
        flooded = window(class_list, args.seconds, flooder)
    result = {
        "learners": args.learners,
        "seconds": args.seconds,
        "alone": alone.summary(),
        "flooded": flooded.summary(),
        "flooder": {"steps": args.flood_steps, "taken": flooder.taken, "refused": flooder.refused},
    }
    p95_alone = alone.summary()["queue_wait_s"]["p95"]
    p95_flooded = flooded.summary()["queue_wait_s"]["p95"]
    if p95_alone and p95_flooded is not None:
        result["p95_ratio"] = round(p95_flooded / p95_alone, 2)
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
