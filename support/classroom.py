"""A class of simulated learners on one Drillbook server, and what they saw.

Each learner registers, then until the time is up: opens the catalogue and the drill page, posts a
run, follows its event stream to `done`, opens the attempt page, and pauses a little (a person
reads). They arrive one after another over `arrive_over_s` seconds, as a class opens its laptops.
The report counts runs completed, 4xx/5xx answers, streams that ended without `done`, metric points
lost or repeated (what each stream delivered against what the database holds), queue wait and page
times. bench/class_load.py prints it; tests/app/test_class_load.py asserts nothing failed.
"""

import os
import random
import statistics
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import create_engine, text

from support.learner import Session, StreamLog, follow

PASSWORD = "class-load-password"
ARRIVALS_S = 10.0  # the learners' first requests are spread evenly over this many seconds
RUN = {"hypothesis": "fits", "prediction": "The loss falls to about zero.", "knobs": {}}


@dataclass
class Report:
    learners: int
    seconds: float
    arrive_over_s: float = ARRIVALS_S
    runs_completed: int = 0
    status_counts: Counter[int] = field(default_factory=Counter)
    connection_errors: list[str] = field(default_factory=list)
    streams_without_done: list[int] = field(default_factory=list)
    lost_points: int = 0
    repeated_points: int = 0
    points_checked: int = 0
    queue_wait_s: list[float] = field(default_factory=list)
    page_ms: list[float] = field(default_factory=list)
    post_ms: list[float] = field(default_factory=list)
    statuses: Counter[str] = field(default_factory=Counter)
    streams: dict[int, StreamLog] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def client_errors(self) -> int:
        return sum(n for code, n in self.status_counts.items() if 400 <= code < 500)

    @property
    def server_errors(self) -> int:
        return sum(n for code, n in self.status_counts.items() if code >= 500)

    def summary(self) -> dict[str, Any]:
        return {
            "learners": self.learners,
            "seconds": self.seconds,
            "arrive_over_s": self.arrive_over_s,
            "runs_completed": self.runs_completed,
            "final_statuses": dict(self.statuses),
            "4xx": self.client_errors,
            "5xx": self.server_errors,
            "connection_errors": len(self.connection_errors),
            "streams_without_done": len(self.streams_without_done),
            "points_checked": self.points_checked,
            "lost_points": self.lost_points,
            "repeated_points": self.repeated_points,
            "queue_wait_s": percentiles(self.queue_wait_s),
            "page_ms": percentiles(self.page_ms),
            "post_ms": percentiles(self.post_ms),
        }


def percentiles(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "p95": None, "max": None, "n": 0}
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(round(0.95 * (len(ordered) - 1))))]
    return {
        "p50": round(statistics.median(ordered), 3),
        "p95": round(p95, 3),
        "max": round(ordered[-1], 3),
        "n": len(ordered),
    }


class Learner:
    def __init__(self, url: str, index: int, report: Report, drill: str, think_s: float) -> None:
        self.report = report
        self.drill = drill
        self.think_s = think_s
        self.random = random.Random(index)
        self.username = f"class-{index:03d}-{os.getpid()}"
        self.session = Session.registered(url, self.username, PASSWORD)

    def timed(self, into: list[float], call: Callable[[], Any]) -> Any:
        started = time.perf_counter()
        try:
            result = call()
        except urllib.error.HTTPError as error:
            with self.report.lock:
                self.report.status_counts[error.code] += 1
            error.close()
            return None
        except (OSError, urllib.error.URLError) as error:
            with self.report.lock:
                self.report.connection_errors.append(f"{type(error).__name__}: {error}")
            return None
        with self.report.lock:
            into.append(1000 * (time.perf_counter() - started))
            self.report.status_counts[200] += 1
        return result

    def page(self, path: str) -> None:
        def read() -> None:
            with self.session.open(path) as response:
                response.read()

        self.timed(self.report.page_ms, read)

    def one_run(self, seed: int) -> None:
        self.page("/")
        self.page(f"/drills/{self.drill}")
        created = self.timed(
            self.report.post_ms,
            lambda: self.session.post_json(
                "/api/attempts", {"drill": self.drill, **RUN, "seed": seed}
            ),
        )
        if created is None:
            return
        attempt_id = int(created["id"])
        try:
            log = follow(self.session, created["urls"]["events"], timeout=600)
        except (OSError, urllib.error.URLError) as error:
            log = StreamLog()
            with self.report.lock:
                self.report.connection_errors.append(f"stream {attempt_id}: {error}")
        attempt = self.timed([], lambda: self.session.get_json(created["urls"]["self"]))
        with self.report.lock:
            self.report.streams[attempt_id] = log
            if log.done_at is None:
                self.report.streams_without_done.append(attempt_id)
            else:
                self.report.runs_completed += 1
            if attempt is not None:
                self.report.statuses[attempt["status"]] += 1
                if attempt["started_at"]:
                    wait = _moment(attempt["started_at"]) - _moment(attempt["created_at"])
                    self.report.queue_wait_s.append(wait.total_seconds())
        self.page(f"/attempts/{attempt_id}")

    def work_until(self, deadline: float, *, arrives_at: float) -> None:
        time.sleep(max(0.0, arrives_at - time.monotonic()))
        seed = 0
        while time.monotonic() < deadline:
            self.one_run(seed)
            seed += 1
            time.sleep(self.think_s * self.random.uniform(0.5, 1.5))


def _moment(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00"))


def check_points(report: Report, database_url: str) -> None:
    """Every point the database holds for a finished run was streamed exactly once, and the
    database holds each (metric, step) once."""
    engine = create_engine(database_url)
    try:
        with engine.connect() as connection:
            for attempt_id, log in report.streams.items():
                if log.done_at is None:
                    continue
                rows = connection.execute(
                    text("SELECT name, step FROM metric_point WHERE attempt_id = :id"),
                    {"id": attempt_id},
                ).all()
                stored = Counter((name, int(step)) for name, step in rows)
                streamed = Counter(log.points)
                report.points_checked += sum(stored.values())
                report.lost_points += sum(1 for point in stored if point not in streamed)
                report.repeated_points += sum(n - 1 for n in stored.values() if n > 1)
                report.repeated_points += sum(n - 1 for n in streamed.values() if n > 1)
    finally:
        engine.dispose()


def run_class(
    url: str | list[str],
    *,
    learners: int,
    seconds: float,
    database_url: str | None,
    drill: str = "overfit-one-batch",
    think_s: float = 2.0,
    arrive_over_s: float = ARRIVALS_S,
) -> Report:
    """`url`: one server, or several web processes of one deployment (learner i uses the
    (i mod n)-th, as a load balancer that keeps a browser on one process)."""
    report = Report(learners=learners, seconds=seconds, arrive_over_s=arrive_over_s)
    class_list = register_class(url, report, drill=drill, think_s=think_s)
    teach(class_list, seconds, arrive_over_s=arrive_over_s)
    if database_url:
        check_points(report, database_url)
    return report


def register_class(
    url: str | list[str], report: Report, *, drill: str, think_s: float
) -> list[Learner]:
    """The report's learners, registered: before the clock starts, since registration hashes a
    password (argon2id, ~150 ms of CPU each)."""
    urls = [url] if isinstance(url, str) else url
    with ThreadPoolExecutor(8) as registrations:
        return list(
            registrations.map(
                lambda i: Learner(urls[(i - 1) % len(urls)], i, report, drill, think_s),
                range(1, report.learners + 1),
            )
        )


def teach(class_list: list[Learner], seconds: float, *, arrive_over_s: float = ARRIVALS_S) -> None:
    """Every learner arrives (learner i after i/n of `arrive_over_s`) and works until the time
    is up (and finishes the run under way)."""
    started = time.monotonic()
    deadline = started + seconds
    spacing = arrive_over_s / len(class_list) if class_list else 0.0
    threads = [
        # Daemons: a benchmark stopped with Ctrl-C does not wait for them to see the deadline.
        threading.Thread(
            target=learner.work_until,
            args=(deadline,),
            kwargs={"arrives_at": started + i * spacing},
            name=learner.username,
            daemon=True,
        )
        for i, learner in enumerate(class_list)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
