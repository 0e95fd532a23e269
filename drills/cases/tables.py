"""Where a case set's tables from real runs are stored: beside its cases, one JSON file per
table in `drills/catalog/<drill>/cases/` (outcomes.json, symptoms.json). One file per drill, so
that a change to one drill's cases rebuilds and reviews only that drill's rows."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import drills.catalog

CATALOG = Path(drills.catalog.__file__).parent


def table_file(drill: str, name: str) -> Path:
    return CATALOG / drill.replace("-", "_") / "cases" / f"{name}.json"


def load(name: str) -> dict[str, Any]:
    """drill -> its stored `name` table, for every drill that has one."""
    found: dict[str, Any] = {}
    for path in sorted(CATALOG.glob(f"*/cases/{name}.json")):
        found[path.parent.parent.name.replace("_", "-")] = json.loads(path.read_text())
    return found


def write(name: str, table: Mapping[str, Any]) -> None:
    for drill, rows in table.items():
        table_file(drill, name).write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
