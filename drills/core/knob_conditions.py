"""An `if` condition of a drill's code read against the values of its knobs, without running it:
is `bug == "shuffled-labels"` true as the run had the knob, and with the fix?

A comparison is understood when one side is a string, or a tuple of strings, among a switched
knob's choices, and the other side names the knob (`bug`, `config.bug`, `knobs["bug"]`) or the
string is one of the knob's non-default values (`ctx.variant == "flipped-sign"`): so that
`row["grad"] == "none"` is not read as a test of a knob whose default is "none". Anything else
(`bug in BUGS`, `sharpness > 0`) is unknown, and so is an `and` or `or` an unknown part decides.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from drills.core.contract import Knob

Side = Literal["ran", "fixed"]


@dataclass(frozen=True)
class KnobSwitch:
    """A choice knob whose value a fix changes: as the run had it, and with the fix."""

    knob: Knob
    ran: str
    fixed: str


def _strings(node: ast.expr) -> tuple[str, ...] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return (node.value,)
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        found = tuple(
            item.value
            for item in node.elts
            if isinstance(item, ast.Constant) and isinstance(item.value, str)
        )
        return found if found and len(found) == len(node.elts) else None
    return None


def _names(node: ast.expr, name: str) -> bool:
    """Whether an expression reads the knob `name`: `bug`, `config.bug`, `knobs["bug"]`."""
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and name in child.id:
            return True
        if isinstance(child, ast.Attribute) and name in child.attr:
            return True
        if isinstance(child, ast.Constant) and child.value == name:
            return True
    return False


def _switch_compared(
    node: ast.Compare, switches: Sequence[KnobSwitch]
) -> tuple[KnobSwitch, tuple[str, ...]] | None:
    if len(node.ops) != 1:
        return None
    strings, other = _strings(node.comparators[0]), node.left
    if strings is None and isinstance(node.ops[0], ast.Eq | ast.NotEq):
        strings, other = _strings(node.left), node.comparators[0]
    if strings is None or _strings(other) is not None:
        return None
    found = [
        switch
        for switch in switches
        if set(strings) <= {str(choice) for choice in switch.knob.choices or ()}
        and (
            _names(other, switch.knob.name)
            or any(value != switch.knob.default for value in strings)
        )
    ]
    return (found[0], strings) if len(found) == 1 else None


def compare_value(node: ast.Compare, switches: Sequence[KnobSwitch], side: Side) -> bool | None:
    found = _switch_compared(node, switches)
    if found is None:
        return None
    switch, strings = found
    value, op = switch.ran if side == "ran" else switch.fixed, node.ops[0]
    if isinstance(op, ast.In | ast.NotIn):
        return (value in strings) == isinstance(op, ast.In)
    if isinstance(op, ast.Eq | ast.NotEq) and len(strings) == 1:
        return (value == strings[0]) == isinstance(op, ast.Eq)
    return None


def condition_value(test: ast.expr, switches: Sequence[KnobSwitch], side: Side) -> bool | None:
    """The condition's value on one side of the fix, or None when the switched knobs alone do
    not decide it."""
    if isinstance(test, ast.BoolOp):
        values = [condition_value(value, switches, side) for value in test.values]
        settles = isinstance(test.op, ast.Or)  # one True settles an `or`, one False an `and`
        if any(value is settles for value in values):
            return settles
        return None if None in values else not settles
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = condition_value(test.operand, switches, side)
        return None if inner is None else not inner
    if isinstance(test, ast.Compare):
        return compare_value(test, switches, side)
    return None
