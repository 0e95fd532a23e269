"""The house rules import-linter cannot state: no torch where none belongs, no SQL in routes, one
constructor of a run, every table registered. The import rules between packages are contracts
in pyproject.toml ([tool.importlinter]); the first test runs them."""

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


def test_the_import_contracts_hold() -> None:
    """drills/ apart from the web app, the runner under the services, the run's end under the
    features, features through hooks: `lint-imports` checks each contract in pyproject.toml."""
    result = subprocess.run(
        [str(Path(sys.executable).with_name("lint-imports")), "--no-cache"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert "0 broken" in result.stdout


def test_every_features_tables_are_in_the_whole_metadata() -> None:
    """Alembic sees only what app/tables.py imports: a feature's new models module must be there."""
    modules = sorted(
        ".".join(path.relative_to(ROOT).with_suffix("").parts)
        for pattern in ("app/*/models.py", "app/*/*_models.py")
        for path in ROOT.glob(pattern)
        if path.parent.name != "models"
    )
    listed = {
        f"{node.module}.{alias.name}"
        for node in ast.parse((ROOT / "app" / "tables.py").read_text()).body
        if isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names
    }
    assert [module for module in modules if module not in listed] == []
    assert len(modules) >= 9, modules


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


def test_tests_take_their_helpers_from_support_not_from_the_benchmarks() -> None:
    """Benchmarks are scripts that print figures; what a test shares with them (a server of its
    own, a simulated class, deployments) lives in support/, which both import."""
    offenders = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = (
                [alias.name for alias in node.names]
                if isinstance(node, ast.Import)
                else [node.module or ""]
                if isinstance(node, ast.ImportFrom)
                else []
            )
            offenders += [
                f"{path.relative_to(ROOT)}: {name}"
                for name in names
                if name == "bench" or name.startswith("bench.")
            ]
    assert offenders == []
