"""What a per-parameter health table says, in words a learner could read off it.

An experiment that shows the table separates two causes only if the table itself differs
between them. Read with the drill's own diagnose() it was credited with distinctions the table
does not show (the drill tells "the loss was rebuilt from a number" from "the forward pass
recorded no graph" by numbers the page hides; both tables read "no gradient anywhere, nothing
moved"). So the table is read from its visible columns only, and only as far as they are
categorical: whether a tensor is trainable, in the optimizer, has a gradient (none, zero,
finite, non-finite) and moved. Magnitudes without a baseline on the page tell nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def row_state(row: Mapping[str, Any]) -> str:
    flags = [f"grad-{row.get('grad')}"]
    if not row.get("requires_grad", True):
        flags.append("frozen")
    if not row.get("in_optimizer", True):
        flags.append("not-in-optimizer")
    flags.append("moved" if moved(row.get("update_norm")) else "still")
    return ",".join(flags)


def moved(update_norm: Any) -> bool:
    """A stored record writes a non-finite number as "inf" or "nan": a tensor that overflowed
    moved, whatever the number says."""
    if isinstance(update_norm, str):
        return True
    return (update_norm or 0) > 0


def table_reading(rows: Iterable[Mapping[str, Any]]) -> str:
    """ "backbone: grad-none,still | head: grad-finite,moved": the states of each part's tensors
    (a part: the first component of a parameter's name), parts in the table's order."""
    parts: dict[str, set[str]] = {}
    for row in rows:
        part = str(row.get("name", "?")).split(".", 1)[0]
        parts.setdefault(part, set()).add(row_state(row))
    if not parts:
        return "no-parameters"
    return " | ".join(f"{part}: {' / '.join(sorted(states))}" for part, states in parts.items())
