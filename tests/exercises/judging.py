"""Judging a file in tests: the real judge (stage 2 is the real decide()), stage 1 through the
forked sandbox double. Runs are cached: a judgement is a pure function of (exercise, code, seed)
on one machine, and the starter and solution are judged by several tests."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from pathlib import Path

from drills.exercises.contract import Judgement
from drills.exercises.judge import judge
from drills.exercises.registry import get_exercise
from tests.exercises.sandbox_double import fork_run

SEEDS = (0, 1, 2, 3, 4)


@dataclass
class Points:
    """A Reporter that keeps the live curve."""

    points: list[tuple[str, int, float]] = field(default_factory=list)

    def metric(self, name: str, step: int, value: float) -> None:
        self.points.append((name, step, value))


@functools.cache
def judged(
    slug: str, code: str, seed: int = 0
) -> tuple[Judgement, tuple[tuple[str, int, float], ...]]:
    points = Points()
    judgement = judge(get_exercise(slug), code, seed, report=points, run=fork_run)
    return judgement, tuple(points.points)


def judgement(slug: str, code: str, seed: int = 0) -> Judgement:
    return judged(slug, code, seed)[0]


def starter(slug: str, seed: int) -> Judgement:
    return judgement(slug, edited(get_exercise(slug).starter), seed)


def solution(slug: str, seed: int) -> Judgement:
    return judgement(slug, get_exercise(slug).solution, seed)


def edited(code: str) -> str:
    """The starter with a harmless edit, so that it is judged rather than "not attempted"."""
    return code + "\n# submitted as it was\n"


def numbers(judgement: Judgement) -> dict[str, float]:
    """The judgement's measurements that are numbers, by name: the bands compare these (one
    that is missing or not a number is a KeyError in the test that reads it)."""
    return {
        key: value
        for key, value in judgement.measurements.items()
        if isinstance(value, int | float)
    }


def signed(judgement: Judgement) -> dict[str, float]:
    """The judgement's signature values that are numbers, by name (as `numbers` for the
    measurements)."""
    return {
        key: value
        for key, value in judgement.signature.items()
        if isinstance(value, int | float) and not isinstance(value, bool)
    }


def statuses(judgement: Judgement) -> dict[str, str]:
    return {check.key: check.status for check in judgement.checks}


def failing_checks(judgement: Judgement) -> set[str]:
    """The keys of the checks the judgement did not pass."""
    return {key for key, status in statuses(judgement).items() if status != "pass"}


@dataclass(frozen=True)
class LearnerFiles:
    """The learner files kept for one fix-the-loop exercise (tests/exercises/fixtures/<folder>/):
    `right_*.py` pass, `wrong_*.py` fail the checks their mistake breaks."""

    slug: str
    folder: str

    @property
    def path(self) -> Path:
        return Path(__file__).parent / "fixtures" / self.folder

    @property
    def right(self) -> list[str]:
        return sorted(path.stem for path in self.path.glob("right_*.py"))

    def kept(self) -> set[str]:
        return {path.stem for path in self.path.glob("*.py")}

    def code(self, name: str) -> str:
        return (self.path / f"{name}.py").read_text()

    def judged(self, name: str, seed: int = 0) -> Judgement:
        return judgement(self.slug, self.code(name), seed)

    def failing(self, name: str, seed: int) -> set[str]:
        return failing_checks(self.judged(name, seed))
