"""The scale-out benchmark's rows as a compact fixed-width table (the JSON keeps everything)."""

from typing import Any

# (heading, width, how to read the cell from a row)
COLUMNS: list[tuple[str, int, Any]] = [
    ("setup", 9, lambda r: r["setup"]),
    ("wk", 2, lambda r: r["workers"]),
    ("web", 3, lambda r: r["web_processes"]),
    ("own", 3, lambda r: r.get("worker_cores") or "-"),
    ("load", 13, lambda r: r["load"]),
    ("runs", 5, lambda r: r["runs_completed"]),
    ("err", 3, lambda r: r["errors"]),
    ("runs/s", 6, lambda r: r["runs_per_s"]),
    ("limit", 6, lambda r: r["compute_limit_runs_per_s"]),
    ("ofLim", 5, lambda r: r["throughput_of_limit"]),
    ("ofMach", 6, lambda r: r.get("throughput_of_machine_limit")),
    ("cmp ms", 6, lambda r: r["compute_ms_alone"]),
    ("cmp@load", 8, lambda r: r["compute_ms_p50_in_window"]),
    ("busy", 4, lambda r: r.get("workers_busy")),
    ("done ms", 7, lambda r: (r.get("post_to_done_ms") or {}).get("p50")),
    ("d/c", 4, lambda r: r.get("done_over_compute")),
    ("webCPU", 6, lambda r: r.get("web_cpu_ms_per_run")),
    ("wkCPU", 6, lambda r: r.get("worker_cpu_ms_per_run")),
    ("web/wk", 6, lambda r: r.get("web_over_worker_cpu")),
    ("schCPU", 6, lambda r: r.get("scheduler_cpu_ms_per_run") if r["setup"] != "embedded" else "-"),
    ("dbCPU", 5, lambda r: r.get("database_cpu_ms_per_run", "-")),
    ("cliCPU", 6, lambda r: r.get("client_cpu_ms_per_run")),
    ("queue p50/p95 s", 15, lambda r: _pair(r["queue_wait_s"])),
    ("page p95", 8, lambda r: (r.get("page_ms") or {}).get("p95", "-")),
    ("B/attempt", 9, lambda r: r["storage"]["bytes_per_attempt"]),
]

LEGEND = (
    "wk: workers; own: cores of their own (--worker-cores); "
    "runs/s against limit = workers / the drill's median compute time alone "
    "(cmp ms; ofLim = the ratio; ofMach: against min(workers, cores) / cmp ms); "
    "cmp@load: median compute time in the window; busy: runs/s x cmp@load / workers; "
    "done ms: median POST->done (d/c = done / cmp@load); "
    "webCPU/wkCPU/schCPU: CPU ms per completed run of web/worker/scheduler processes "
    "(embedded: the scheduler runs inside the web process); "
    "web/wk: web CPU / worker CPU in the window; "
    "dbCPU: the PostgreSQL server (scale-out); cliCPU: the benchmark's own clients; "
    "page p95 in ms (learners only)"
)


def _pair(p: dict[str, Any]) -> str:
    return f"{p['p50']:.2f}/{p['p95']:.2f}" if p["n"] else "-"


def _cell(value: Any, width: int) -> str:
    if isinstance(value, float) and value >= 100:
        value = round(value)
    return ("-" if value is None else str(value)).rjust(width)


def print_table(rows: list[dict[str, Any]], *, header: bool) -> None:
    if header:
        print(" ".join(heading.rjust(width) for heading, width, _ in COLUMNS))
    for row in rows:
        print(" ".join(_cell(read(row), width) for _, width, read in COLUMNS))
    if header and len(rows) > 1:
        print(LEGEND)
