"""A file's changes from an exercise's starter, as a unified diff: what a run's page shows of the
learner's code, and what the reference solution changes (a case's code verdict shows both side by
side)."""

from __future__ import annotations

import difflib

from drills.exercises.contract import Exercise


def diff_from_starter(exercise: Exercise, code: str, *, to: str = "your code") -> str:
    """A unified diff, starter -> code (empty when they are the same)."""
    lines = difflib.unified_diff(
        exercise.starter.splitlines(keepends=True),
        code.splitlines(keepends=True),
        fromfile="starter.py",
        tofile=to,
    )
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)
