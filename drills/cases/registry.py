"""Every case, by key: each module under drills/cases/pool/ exposes CASES (a tuple of Case)."""

from __future__ import annotations

import importlib
import pkgutil
from functools import cache

import drills.cases.pool
from drills.cases.contract import Case, CaseSet


class UnknownCase(KeyError):
    def __init__(self, key: str) -> None:
        super().__init__(f"unknown case {key!r}")
        self.key = key

    def __str__(self) -> str:
        return str(self.args[0])


@cache
def all_cases() -> tuple[Case, ...]:
    found: list[Case] = []
    for module_info in sorted(pkgutil.iter_modules(drills.cases.pool.__path__)):
        module = importlib.import_module(f"drills.cases.pool.{module_info.name}")
        found.extend(module.CASES)
    keys = [case.key for case in found]
    duplicated = {key for key in keys if keys.count(key) > 1}
    if duplicated:
        raise RuntimeError(f"case keys used twice: {sorted(duplicated)}")
    return tuple(found)


def get_case(key: str) -> Case:
    for case in all_cases():
        if case.key == key:
            return case
    raise UnknownCase(key)


def all_case_sets() -> tuple[CaseSet, ...]:
    seen: dict[str, CaseSet] = {}
    for case in all_cases():
        seen.setdefault(case.case_set.drill, case.case_set)
    return tuple(seen.values())
