"""Every code exercise, by slug: found in the drill folders, not listed.

An exercise lives in `drills/catalog/<drill>/exercises/<name>/` and exposes `EXERCISE` from its
`__init__.py`, which is torch-free: finding them all is cheap enough for the web process.
Adding one touches nothing else.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import cache

import drills.catalog
from drills.core.contract import Drill
from drills.core.registry import all_drills
from drills.exercises.contract import Exercise


class UnknownExercise(KeyError):
    def __init__(self, slug: str) -> None:
        known = ", ".join(exercise.slug for exercise in all_exercises())
        super().__init__(f"unknown exercise {slug!r} (known: {known})")
        self.slug = slug

    def __str__(self) -> str:
        return str(self.args[0])


class ExerciseCatalogError(RuntimeError):
    """An exercise folder breaks the contract (no EXERCISE, a slug used twice, wrong drill)."""


@cache
def _catalog() -> tuple[Exercise, ...]:
    found: list[Exercise] = []
    for drill_package in sorted(pkgutil.iter_modules(drills.catalog.__path__)):
        parent = f"drills.catalog.{drill_package.name}.exercises"
        if importlib.util.find_spec(parent) is None:
            continue
        drill: Drill = importlib.import_module(f"drills.catalog.{drill_package.name}").DRILL
        package = importlib.import_module(parent)
        for info in sorted(pkgutil.iter_modules(package.__path__)):
            if not info.ispkg:
                continue
            module = importlib.import_module(f"{parent}.{info.name}")
            exercise = getattr(module, "EXERCISE", None)
            if not isinstance(exercise, Exercise):
                raise ExerciseCatalogError(f"{parent}.{info.name} exposes no EXERCISE")
            if exercise.drill != drill.slug:
                raise ExerciseCatalogError(
                    f"exercise {exercise.slug!r} lives in {drill.slug!r} "
                    f"but names {exercise.drill!r}"
                )
            found.append(exercise)
    slugs = [exercise.slug for exercise in found]
    if len(set(slugs)) != len(slugs):
        raise ExerciseCatalogError(f"two exercises share a slug: {sorted(slugs)}")
    positions = {drill.slug: drill.position for drill in all_drills()}
    return tuple(sorted(found, key=lambda e: (positions.get(e.drill, 0), e.slug)))


def all_exercises() -> list[Exercise]:
    return list(_catalog())


def get_exercise(slug: str) -> Exercise:
    for exercise in _catalog():
        if exercise.slug == slug:
            return exercise
    raise UnknownExercise(slug)


def exercises_for(drill: str) -> list[Exercise]:
    return [exercise for exercise in _catalog() if exercise.drill == drill]
