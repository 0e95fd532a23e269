"""The training code a run executed, as the learner reads it: the drill's own modules (and the
kit modules its training code imports), with the lines of the chosen variant marked.

The files are the real source the worker imports, read from disk (no torch is imported here).
A variant's lines are found in the code's syntax tree: every place that names the variant's
value (e.g. `bug == "shuffled-labels"`), the branch such a test opens, and the function a
table of variants maps that value to (`VARIANTS = {"flipped-sign": flipped_backward}`).
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from drills.core.contract import Drill
from drills.core.syntax import parse


@dataclass(frozen=True)
class SourceFile:
    path: str  # relative to the drills package: "catalog/overfit_one_batch/train.py"
    lines: tuple[str, ...]
    marked: frozenset[int] = field(default_factory=frozenset)  # 1-based line numbers


def _package_dir(module: str) -> Path:
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent


DRILLS_ROOT = Path(__file__).resolve().parent.parent


# The files are read and parsed once per process: they do not change while the server runs, and
# every ended run's page shows them.
@functools.cache
def _files(drill_module: str) -> tuple[Path, ...]:
    """The drill's modules (train.py first, its description left out) and the kit modules
    they import."""
    folder = _package_dir(drill_module)
    own = sorted(folder.glob("*.py"), key=lambda path: (path.name != "train.py", path.name))
    own = [path for path in own if path.name != "__init__.py"]
    kit: list[Path] = []
    for path in own:
        for node in ast.walk(parse(path.read_text(encoding="utf-8"))):
            name = node.module if isinstance(node, ast.ImportFrom) else None
            if name is not None and name.startswith("drills.kit."):
                module = DRILLS_ROOT / Path(*name.split(".")[1:]).with_suffix(".py")
                if module.exists() and module not in kit:
                    kit.append(module)
    return (*own, *kit)


@functools.cache
def _source_file(path: Path, values: frozenset[str], defaults: frozenset[str]) -> SourceFile:
    text = path.read_text(encoding="utf-8")
    return SourceFile(
        path=str(path.relative_to(DRILLS_ROOT)),
        lines=tuple(text.splitlines()),
        marked=frozenset(variant_lines(text, set(values), defaults) if values else ()),
    )


def _branch_lines(node: ast.If) -> set[int]:
    """The lines of an `if` test and its own body (not its elif/else)."""
    first = node.lineno
    last = max((child.end_lineno or child.lineno) for child in node.body)
    return set(range(first, last + 1))


def variant_lines(
    source: str, values: set[str], defaults: frozenset[str] | set[str] = frozenset()
) -> set[int]:
    """The lines of `source` that belong to one of these variant values; and the tests that
    compare with the default they replaced (`causal = attention == "causal"`), which is where
    a variant that has no branch of its own changes what the code does."""
    tree = parse(source)
    functions = {
        node.name: node
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    marked: set[int] = set()

    def names_value(node: ast.AST, among: set[str] | frozenset[str] = values) -> bool:
        return any(
            isinstance(child, ast.Constant) and child.value in among for child in ast.walk(node)
        )

    for node in ast.walk(tree):
        if isinstance(node, ast.If) and names_value(node.test):
            marked |= _branch_lines(node)
        elif isinstance(node, ast.Compare) and names_value(node, values | defaults):
            marked |= set(range(node.lineno, (node.end_lineno or node.lineno) + 1))
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in values:
                    marked.add(key.lineno)
                    target = functions.get(value.id) if isinstance(value, ast.Name) else None
                    if target is not None:
                        marked |= set(range(target.lineno, (target.end_lineno or 0) + 1))
    return marked


def training_source(drill: Drill, knobs: Mapping[str, object]) -> list[SourceFile]:
    """The files of the drill's training code, each with the chosen variant's lines marked. A
    knob left at its default marks nothing (the healthy path is the code as it reads)."""
    changed = [
        knob
        for knob in drill.knobs
        if knob.kind == "choice" and knob.name in knobs and knobs[knob.name] != knob.default
    ]
    values = frozenset(str(knobs[knob.name]) for knob in changed)
    defaults = frozenset(str(knob.default) for knob in changed)
    return [_source_file(path, values, defaults) for path in _files(type(drill).__module__)]
