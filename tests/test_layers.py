"""The house rules between layers: app -> drills only, and no torch in the web process."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_drills_never_import_the_web_layer() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            name
            for name in imported_modules(path)
            if name.split(".")[0] in {"app", "fastapi", "starlette", "sqlmodel", "sqlalchemy"}
        )
        for path in (ROOT / "drills").rglob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_web_process_describes_drills_without_importing_torch() -> None:
    code = (
        "import sys; from app.main import create_app; "
        "from drills.core.registry import all_drills; from drills.core.catalogue import describe; "
        "create_app(); [describe(d) for d in all_drills()]; print('torch' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == "False"


def drills_import_graph() -> dict[str, set[str]]:
    """Module -> the drills modules it imports (function-level imports included)."""
    graph: dict[str, set[str]] = {}
    for path in (ROOT / "drills").rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        graph[module] = {name for name in imported_modules(path) if name.startswith("drills.")}
    return graph


def test_drills_have_no_import_cycle() -> None:
    graph = drills_import_graph()
    done: set[str] = set()

    def visit(module: str, path: list[str]) -> None:
        if module in path:
            cycle = path[path.index(module) :] + [module]
            raise AssertionError("import cycle: " + " -> ".join(cycle))
        if module in done:
            return
        for target in sorted(graph.get(module, ())):
            visit(target, [*path, module])
        done.add(module)

    for module in sorted(graph):
        visit(module, [])


def test_core_and_drill_descriptions_import_no_torch_at_module_level() -> None:
    torch_free = [
        *(ROOT / "drills" / "core").glob("*.py"),
        *(ROOT / "drills" / "catalog").glob("*/__init__.py"),
    ]
    offenders = []
    for path in torch_free:
        if path.name == "runner.py":
            continue  # the one core module that trains
        tree = ast.parse(path.read_text())
        for node in tree.body:  # module level only: run() imports its training code lazily
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            if any(name == "torch" or name.startswith(("torch.", "drills.kit")) for name in names):
                offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


# The runner may lean on settings, the models' vocabulary and itself; the services (evidence,
# replays, the broker, attempts, ...) depend on the runner, never the other way round.
RUNNER_MAY_IMPORT = {"app.core.config", "app.models"}
# One exception, on the worker's side: the progress store is what a worker runs to store its own
# run, so it uses the run's lifecycle, the evidence functions, the change channel, the engine
# factory and the features' hooks (app/features.py). Nothing on the web process's side of the
# runner imports it (worker_task does, inside the task).
WORKER_SIDE_MAY_IMPORT = {
    "app/runner/progress_store.py": {
        "app",
        "app.runs",
        "app.runs.evidence",
        "app.runs.attempt_changes",
        "app.runs.lifecycle",
        "app.core.db",
    },
}


def test_the_runner_imports_no_service_module() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(
            name
            for name in imported_modules(path)
            if name.split(".")[0] == "app"
            and not name.startswith("app.runner")
            and name not in RUNNER_MAY_IMPORT
            and not name.startswith("app.models.")
            and name not in WORKER_SIDE_MAY_IMPORT.get(str(path.relative_to(ROOT)), set())
        )
        for path in (ROOT / "app" / "runner").glob("*.py")
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_the_progress_store_is_imported_only_inside_the_worker_task() -> None:
    """The web process's runner never loads the worker's storage at module level."""
    for path in (ROOT / "app" / "runner").glob("*.py"):
        module_level = ast.parse(path.read_text()).body
        for node in module_level:
            if isinstance(node, ast.ImportFrom):
                assert node.module != "app.runner.progress_store", path


DATABASE_CALLS = {"add", "add_all", "commit", "delete", "exec", "execute", "flush", "refresh"}


def route_modules() -> list[Path]:
    """Every feature's handlers: its routes.py, *_routes.py and api.py."""
    return sorted(
        path
        for path in (ROOT / "app").rglob("*.py")
        if path.name in {"routes.py", "api.py"} or path.name.endswith("_routes.py")
    )


def test_route_handlers_leave_database_work_to_the_services() -> None:
    """No `session.add/commit/exec/execute/...` in a route module: handlers call a service."""
    offenders = []
    routes = route_modules()
    assert len(routes) >= 15, routes  # the rule reads the feature packages' route modules
    for path in routes:
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in DATABASE_CALLS
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "session"
            ):
                offenders.append(f"{path.relative_to(ROOT)}:{node.lineno} session.{node.func.attr}")
    assert offenders == []


# What ends a run (app/runs/lifecycle.py and the four places that call it) knows no feature: cases,
# review and exercises react through the hooks app/features.py registers.
RUN_ENDING_PATH = [
    "app/runs/lifecycle.py",
    "app/runs/evidence.py",
    "app/runs/evidence_writer.py",
    "app/runs/housekeeping.py",
    "app/runner/progress_store.py",
]
FEATURES = (
    "app.cases",
    "app.practice",
    "app.exercises",
    "app.grading",
    "app.portfolio",
    "app.assignments",
)


def test_the_run_ending_path_imports_no_feature() -> None:
    offenders = {
        path: sorted(name for name in imported_modules(ROOT / path) if name.startswith(FEATURES))
        for path in RUN_ENDING_PATH
    }
    assert {path: names for path, names in offenders.items() if names} == {}


def test_every_run_is_made_by_the_lifecycle() -> None:
    """One constructor: `Attempt(...)` appears only in app/runs/lifecycle.py's new_run, so each
    run gets its queue turn, its scheduler or hold, and its replay command the same way."""
    makers = []
    for path in sorted((ROOT / "app").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "Attempt"
            ):
                makers.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert [maker for maker in makers if not maker.startswith("app/runs/lifecycle.py:")] == []
    assert makers, "new_run makes them"
