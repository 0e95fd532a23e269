"""Which lines of a drill's source a fix changes. The source is shared by every variant (a variant
is a branch such as `if bug == "shuffled-labels":`), so a fix rewrites no line: it turns knobs, and
with them which branches run. Each `if` that tests a switched knob is read on both sides of the
fix (drills/core/knob_conditions.py): a statement reached only as the run had the knobs is removed
by the fix, one reached only with the fix is added, and a line reached both times whose comparison
of the knob comes out otherwise (the `if` test itself, `causal = attention == "causal"`) decides
differently. A branch that leaves its block (`return`, `raise`, `break`, `continue`) on one side
only leaves the rest of that block to the other side. A table of variants
(`VARIANTS = {"flipped-sign": flipped_backward}`) counts the entry, and the function it names,
that each side looks up.

The code is read, never run (no torch, no import of the drill). An `if` whose test the switched
knobs alone do not decide (`bug in BUGS`, `sharpness > 0`) is taken to go the same way both
times, and its branches are read on.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Sequence
from dataclasses import dataclass

from drills.core.knob_conditions import KnobSwitch, Side, compare_value, condition_value
from drills.core.syntax import parse


@dataclass(frozen=True)
class LineChanges:
    """1-based line numbers, each in at most one set."""

    removed: frozenset[int]  # reached as the run had the knobs, not with the fix
    added: frozenset[int]  # reached with the fix only
    decides: frozenset[int]  # reached both times, comparing a switched knob differently


def _lines(node: ast.AST) -> set[int]:
    first = getattr(node, "lineno", 0)
    return set(range(first, (getattr(node, "end_lineno", None) or first) + 1))


class _Reading:
    """One pass over a module's syntax tree, collecting the three sets of lines."""

    def __init__(self, source: str, switches: Sequence[KnobSwitch]) -> None:
        self.text = source.splitlines()
        self.switches = switches
        self.removed: set[int] = set()
        self.added: set[int] = set()
        self.decides: set[int] = set()

    def truth(self, test: ast.expr, side: Side) -> bool | None:
        return condition_value(test, self.switches, side)

    # -- statements -----------------------------------------------------------------------------
    def block(self, statements: Sequence[ast.stmt]) -> None:
        """Statements reached both as the run had the knobs and with the fix."""
        for index, statement in enumerate(statements):
            if not isinstance(statement, ast.If):
                for _, value in ast.iter_fields(statement):
                    self._field(value)
                continue
            going_on = self._if(statement)
            if going_on is not None:  # one side left the block in the branch it took
                self._reached(statements[index + 1 :], *going_on)
                return

    def _field(self, value: object) -> None:
        items = value if isinstance(value, list) else [value]
        statements = [item for item in items if isinstance(item, ast.stmt)]
        if statements and len(statements) == len(items):
            self.block(statements)
            return
        for item in items:
            if isinstance(item, ast.ExceptHandler | ast.match_case):
                self.block(item.body)
            elif isinstance(item, ast.AST):  # an expression, `with` item, argument list...
                self._expression(item)

    def _expression(self, node: ast.AST) -> None:
        for child in ast.walk(node):
            if not isinstance(child, ast.Compare):
                continue
            if compare_value(child, self.switches, "ran") != compare_value(
                child, self.switches, "fixed"
            ):
                self.decides |= _lines(child)

    def _if(self, node: ast.If) -> tuple[Side, set[int]] | None:
        """Read an `if` reached on both sides; when one side leaves the enclosing block in the
        branch it takes (a `return`, `raise`, `break` or `continue`) and the other does not:
        the side that goes on, and the set its lines from there belong to."""
        ran, fixed = self.truth(node.test, "ran"), self.truth(node.test, "fixed")
        if ran is None or fixed is None or ran == fixed:
            self._expression(node.test)
            self.block(node.body)
            self.block(node.orelse)
            return None
        self.decides |= self._header(node)
        taken, skipped = (self.removed, self.added) if ran else (self.added, self.removed)
        taken |= self._body(node)
        other: Side = "fixed" if ran else "ran"
        if node.orelse:
            self._reached_else(node, other, skipped)
        ran_leaves, fixed_leaves = self._leaves(node, "ran"), self._leaves(node, "fixed")
        if ran_leaves and not fixed_leaves:
            return "fixed", self.added
        if fixed_leaves and not ran_leaves:
            return "ran", self.removed
        return None

    def _reached(self, statements: Sequence[ast.stmt], side: Side, into: set[int]) -> None:
        """Statements reached on one side only: all of their lines, except the branches that
        side does not take."""
        for statement in statements:
            if not isinstance(statement, ast.If):
                into |= _lines(statement)
                continue
            value = self.truth(statement.test, side)
            if value is None:
                into |= _lines(statement)
                continue
            if value:
                self.decides |= self._header(statement)
                into |= self._body(statement)
            elif statement.orelse:
                self._reached_else(statement, side, into)

    def _reached_else(self, node: ast.If, side: Side, into: set[int]) -> None:
        """The `else` of `node` (or its `elif` chain), taken on one side only."""
        if len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If):
            self._reached(node.orelse, side, into)
            return
        self.decides |= self._header(node)
        into |= self._else(node)

    def _leaves(self, node: ast.If, side: Side) -> bool:
        """Whether the branch this side takes ends by leaving the block."""
        value = self.truth(node.test, side)
        if value is None:
            return False
        branch = node.body if value else node.orelse
        if not value and len(branch) == 1 and isinstance(branch[0], ast.If):
            return self._leaves(branch[0], side)
        return bool(branch) and isinstance(
            branch[-1], ast.Return | ast.Raise | ast.Break | ast.Continue
        )

    # -- line spans ------------------------------------------------------------------------------
    def _header(self, node: ast.If) -> set[int]:
        return set(range(node.lineno, (node.test.end_lineno or node.lineno) + 1))

    def _body(self, node: ast.If) -> set[int]:
        """The lines of the branch an `if` test opens, with the comments at its top."""
        start = min((node.test.end_lineno or node.lineno) + 1, node.body[0].lineno)
        return set(range(start, max(_end(item) for item in node.body) + 1))

    def _else(self, node: ast.If) -> set[int]:
        """The lines of a plain `else:` branch, after the line that says `else:`."""
        body_end = max(_end(item) for item in node.body)
        start = node.orelse[0].lineno
        for number in range(body_end + 1, start):
            if self.text[number - 1].strip().startswith("else"):
                start = number + 1
                break
        return set(range(start, max(_end(item) for item in node.orelse) + 1))

    # -- tables of variants ---------------------------------------------------------------------
    def tables(self, tree: ast.Module) -> None:
        """The entry of each table keyed by a switched knob's choices that each side looks up,
        and the function that entry names."""
        functions = {
            node.name: node
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        for node in ast.walk(tree):
            if not isinstance(node, ast.Dict) or not node.keys:
                continue
            keys = [key.value if isinstance(key, ast.Constant) else None for key in node.keys]
            for switch in self.switches:
                choices = {str(choice) for choice in switch.knob.choices or ()}
                if not all(isinstance(key, str) and key in choices for key in keys):
                    continue
                sides = {switch.ran: self.removed, switch.fixed: self.added}
                for key, key_node, value in zip(keys, node.keys, node.values, strict=True):
                    into = sides.get(str(key))
                    if into is None or key_node is None:
                        continue
                    into |= _lines(key_node)
                    target = functions.get(value.id) if isinstance(value, ast.Name) else None
                    if target is not None:
                        into |= _lines(target)

    def changes(self) -> LineChanges:
        both = self.removed & self.added
        decides = self.decides | both
        return LineChanges(
            removed=frozenset(self.removed - decides),
            added=frozenset(self.added - decides),
            decides=frozenset(decides),
        )


def _end(node: ast.stmt) -> int:
    return node.end_lineno or node.lineno


# A page shows the same few files for every revealed case of a drill: each is read once per
# process and pair of knob values.
@functools.lru_cache(maxsize=256)
def branch_changes(source: str, switches: tuple[KnobSwitch, ...]) -> LineChanges:
    """The lines of `source` that the switches remove, add, or make decide differently."""
    reading = _Reading(source, switches)
    if switches:
        tree = parse(source)
        reading.block(tree.body)
        reading.tables(tree)
    return reading.changes()
