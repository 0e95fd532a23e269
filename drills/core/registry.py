"""Every drill the app offers, by slug, in catalogue order: found, not listed.

Each package under `drills/catalog/` exposes its drill as `DRILL`. Describing a drill never
imports torch, so finding them all is cheap enough for the web process.
"""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import drills.catalog
from drills.core.contract import Drill


class UnknownDrill(KeyError):
    def __init__(self, slug: str) -> None:
        known = ", ".join(drill.slug for drill in all_drills())
        super().__init__(f"unknown drill {slug!r} (known: {known})")
        self.slug = slug

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; the message reads better unquoted.
        return str(self.args[0])


class CatalogError(RuntimeError):
    """A package in drills/catalog/ breaks the contract (no DRILL, a slug used twice)."""


@cache
def _catalog() -> tuple[Drill, ...]:
    found: list[Drill] = []
    for package in pkgutil.iter_modules(drills.catalog.__path__):
        module = importlib.import_module(f"drills.catalog.{package.name}")
        drill = getattr(module, "DRILL", None)
        if not isinstance(drill, Drill):
            raise CatalogError(f"drills/catalog/{package.name} exposes no DRILL (a Drill)")
        found.append(drill)
    slugs = [drill.slug for drill in found]
    if len(set(slugs)) != len(slugs):
        raise CatalogError(f"two drills share a slug: {sorted(slugs)}")
    return tuple(sorted(found, key=lambda drill: (drill.position, drill.slug)))


def all_drills() -> list[Drill]:
    return list(_catalog())


def get_drill(slug: str) -> Drill:
    for drill in _catalog():
        if drill.slug == slug:
            return drill
    raise UnknownDrill(slug)
