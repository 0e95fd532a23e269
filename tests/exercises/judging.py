"""Judging a file in tests: the real judge (stage 2 is the real decide()), stage 1 through the
forked sandbox double. Runs are cached: a judgement is a pure function of (exercise, code, seed)
on one machine, and the starter and solution are judged by several tests."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

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


def statuses(judgement: Judgement) -> dict[str, str]:
    return {check.key: check.status for check in judgement.checks}
