"""What a fix changes in the code that ran, as a unified-style diff: the knob values that differ,
then per file (in the order of drills/core/source.py, train.py first) the hunks around the lines
the fix removes, adds, or makes decide differently (drills/core/branch_changes.py), with a few
lines of context.

The code is the same file on both sides, so a hunk has one line number per line. A fix that only
changes a number (a learning rate) changes no line: its diff is the knob values alone
(`lr = 1.2` -> `lr = 0.15`), so that it never reads as "nothing changed" when something did.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from drills.core.branch_changes import LineChanges, branch_changes
from drills.core.contract import Drill
from drills.core.knob_conditions import KnobSwitch
from drills.core.source import training_source

CONTEXT_LINES = 3

LineKind = Literal["context", "removed", "added", "decides"]
# "!" as in a context diff's changed line: the line runs before and after, and decides otherwise.
SIGNS: dict[LineKind, str] = {"context": " ", "removed": "-", "added": "+", "decides": "!"}


@dataclass(frozen=True)
class DiffLine:
    number: int  # 1-based, the same on both sides
    kind: LineKind
    text: str

    @property
    def sign(self) -> str:
        return SIGNS[self.kind]


@dataclass(frozen=True)
class Hunk:
    lines: tuple[DiffLine, ...]

    @property
    def first(self) -> int:
        return self.lines[0].number

    @property
    def last(self) -> int:
        return self.lines[-1].number


@dataclass(frozen=True)
class FileDiff:
    path: str  # relative to the drills package, as in drills/core/source.py
    hunks: tuple[Hunk, ...]


@dataclass(frozen=True)
class KnobChange:
    name: str
    ran: str  # the value as Python spells it: "1.2", '"shuffled-labels"'
    fixed: str


@dataclass(frozen=True)
class SourceDiff:
    knobs: tuple[KnobChange, ...]
    files: tuple[FileDiff, ...]

    @property
    def changes_nothing(self) -> bool:
        return not self.knobs and not self.files

    def as_text(self) -> str:
        """The diff as plain text, one line per line of the page's."""
        out: list[str] = []
        for change in self.knobs:
            out += [f"- {change.name} = {change.ran}", f"+ {change.name} = {change.fixed}"]
        for file in self.files:
            out.append(f"--- drills/{file.path}")
            for hunk in file.hunks:
                out.append(f"@@ lines {hunk.first}-{hunk.last} @@")
                out += [f"{line.sign} {line.number:>4} {line.text}".rstrip() for line in hunk.lines]
        return "\n".join(out)


def python_literal(value: object) -> str:
    """A knob value as the drills' code would write it."""
    if isinstance(value, str):
        return json.dumps(value)  # double quotes, as in `bug == "shuffled-labels"`
    if isinstance(value, float):
        # A scaled rate can carry float noise (0.1 * 3 is 0.30000000000000004): shown as 0.3.
        return repr(float(f"{value:.12g}"))
    if isinstance(value, list | tuple):
        items = [python_literal(item) for item in value]
        return f"({items[0]},)" if len(items) == 1 else f"({', '.join(items)})"
    return repr(value)


def _plain(value: object) -> object:
    """A value as compared: a knob stored as JSON holds a list where the drill holds a tuple."""
    return tuple(value) if isinstance(value, list) else value


def hunks(
    lines: Sequence[str], kinds: Mapping[int, LineKind], context: int = CONTEXT_LINES
) -> tuple[Hunk, ...]:
    """The hunks of one file: each changed line (a 1-based number in `kinds`) with `context`
    lines either side, windows that touch or overlap merged into one hunk."""
    windows: list[list[int]] = []
    for number in sorted(kinds):
        first, last = max(1, number - context), min(len(lines), number + context)
        if windows and first <= windows[-1][1] + 1:
            windows[-1][1] = max(windows[-1][1], last)
        else:
            windows.append([first, last])
    return tuple(
        Hunk(
            tuple(
                DiffLine(number, kinds.get(number, "context"), lines[number - 1])
                for number in range(first, last + 1)
            )
        )
        for first, last in windows
    )


def _kinds(changes: LineChanges) -> dict[int, LineKind]:
    kinds: dict[int, LineKind] = dict.fromkeys(changes.removed, "removed")
    kinds |= dict.fromkeys(changes.added, "added")
    kinds |= dict.fromkeys(changes.decides, "decides")
    return kinds


def source_diff(
    drill: Drill,
    ran: Mapping[str, object],
    fixed: Mapping[str, object],
    context: int = CONTEXT_LINES,
) -> SourceDiff:
    """The drill's code as it ran with the knobs `ran` against the code with the knobs `fixed`.
    A knob missing from either mapping is at its default."""
    knobs: list[KnobChange] = []
    switches: list[KnobSwitch] = []
    for knob in drill.knobs:
        before, after = ran.get(knob.name, knob.default), fixed.get(knob.name, knob.default)
        if _plain(before) == _plain(after):
            continue
        knobs.append(KnobChange(knob.name, python_literal(before), python_literal(after)))
        if knob.kind == "choice":
            switches.append(KnobSwitch(knob, str(before), str(after)))
    files: list[FileDiff] = []
    if switches:
        for file in training_source(drill, {}):
            kinds = _kinds(branch_changes("\n".join(file.lines), tuple(switches)))
            if kinds:
                files.append(FileDiff(file.path, hunks(file.lines, kinds, context)))
    return SourceDiff(tuple(knobs), tuple(files))
