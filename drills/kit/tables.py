"""Diagnostic tables: the JSON shape the attempt page renders generically.

A drill puts them in `diagnostics["tables"]` (a list, shown in order): decoded input → label pairs,
a confusion matrix, the first non-finite tensor, a replay comparison... Cells are plain JSON values
(str, int, float, bool, None); floats are formatted by the page.
"""

from collections.abc import Iterable, Sequence
from typing import Any

Cell = str | int | float | bool | None


def table(
    key: str,
    title: str,
    columns: Sequence[str],
    rows: Iterable[Sequence[Cell]],
    *,
    note: str | None = None,
) -> dict[str, Any]:
    materialised = [list(row) for row in rows]
    for row in materialised:
        if len(row) != len(columns):
            raise ValueError(f"table {key!r}: row {row!r} does not have {len(columns)} cells")
    return {
        "key": key,
        "title": title,
        "columns": list(columns),
        "rows": materialised,
        "note": note,
    }
