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
        "import sys; from app.main import create_app; from drills.registry import all_drills; "
        "from drills.catalogue import describe; create_app(); [describe(d) for d in all_drills()]; "
        "print('torch' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == "False"
