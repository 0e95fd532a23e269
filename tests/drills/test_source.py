"""The training code a run's page shows: the worker's real modules, with the chosen variant's
lines marked, and nothing marked for a healthy run."""

import importlib
import inspect
from pathlib import Path

import pytest

from drills.core.registry import all_drills, get_drill
from drills.core.source import DRILLS_ROOT, training_source

CHOICES = [
    (drill.slug, knob.name, value)
    for drill in all_drills()
    for knob in drill.knobs
    if knob.kind == "choice"
    for value in knob.choices or ()
    if value != knob.default
]


@pytest.mark.parametrize(("slug", "knob", "value"), CHOICES)
def test_every_variant_marks_lines_of_the_code_that_ran(slug: str, knob: str, value: str) -> None:
    files = training_source(get_drill(slug), {knob: value})
    marked = {(f.path, line) for f in files for line in f.marked}
    assert marked, f"{slug} {knob}={value}: no line marked"
    for f in files:
        assert all(1 <= line <= len(f.lines) for line in f.marked)


@pytest.mark.parametrize("drill", all_drills(), ids=lambda drill: drill.slug)
def test_the_files_are_the_modules_the_worker_imports(drill: object) -> None:
    files = training_source(drill, {})  # type: ignore[arg-type]
    assert files[0].path.endswith("/train.py")
    assert not any(f.marked for f in files)  # defaults: the code as it reads
    train = importlib.import_module(type(drill).__module__ + ".train")
    on_disk = inspect.getsourcefile(train)
    assert on_disk is not None
    assert (DRILLS_ROOT / files[0].path).resolve() == Path(on_disk).resolve()
    assert "\n".join(files[0].lines) == inspect.getsource(train).rstrip("\n")


def test_the_shuffled_labels_are_the_lines_marked_in_the_loop() -> None:
    files = training_source(get_drill("overfit-one-batch"), {"bug": "shuffled-labels"})
    loop = next(f for f in files if f.path.endswith("train.py"))
    marked = [loop.lines[line - 1] for line in sorted(loop.marked)]
    assert any("randperm" in line for line in marked), marked


@pytest.mark.parametrize("drill", all_drills(), ids=lambda drill: drill.slug)
def test_a_drills_case_set_and_exercises_are_never_shown_as_the_code_that_ran(
    drill: object,
) -> None:
    """The case set beside the drill names every hidden cause, and an exercise folder holds its
    solution: a run's page shows the training code, and neither is part of it."""
    shown = {f.path for f in training_source(drill, {})}  # type: ignore[arg-type]
    assert not [path for path in shown if "/cases/" in path or "/exercises/" in path]
    assert all(path.startswith(("catalog/", "kit/")) for path in shown), shown
