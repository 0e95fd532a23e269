"""Every case, by key: a drill's case set lives beside it, in `drills/catalog/<drill>/cases/`,
whose package exposes CASES (a tuple of Case) and may expose RETIRED_CASES. A subpackage, not a
module, so that the drill's "code that ran" (drills/core/source.py reads the folder's own *.py
files) never shows it.

A retired case is one the pool no longer offers (its symptom gave its cause away by
construction, say): no new attempt draws it, while an attempt stored under it still opens,
runs its experiments, scores and reveals. `all_cases()` is the offered pool; `get_case()` finds
retired ones too."""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from functools import cache

import drills.catalog
from drills.cases.contract import Case, CaseSet


class UnknownCase(KeyError):
    def __init__(self, key: str) -> None:
        super().__init__(f"unknown case {key!r}")
        self.key = key

    def __str__(self) -> str:
        return str(self.args[0])


# Keys the pool used before causes were drawn -> the case that now holds that symptom and its
# old cause among its look-alikes: attempts stored under an old key still open, score and
# reveal (tests/drills/test_case_pool.py checks each old cause is among the new case's).
RENAMED = {
    "half-way-there": "a-split-classifier",
    "borrowed-eval-loop": "first-step-crash",
    "stuck-at-one-point-three": "a-borrowed-data-loader",
    "new-collator-low-loss": "a-new-collator",
    "five-percent-slower": "a-custom-activation",
    "short-rows-score-low": "a-vectorised-average",
    "first-loss-in-the-hundreds": "own-initialisation",
    "early-layers-never-move": "flat-at-two-point-three",
    "spikes-on-a-schedule": "a-loss-that-jumps",
    "jumps-after-a-tweak": "jumps-after-a-change",
    "is-this-wobble-a-problem": "a-colleagues-curve",
    "accuracy-stuck-at-95": "a-screening-classifier",
    "falling-loss-zero-score": "a-code-rewriter",
    "a-perfectly-flat-run": "a-code-rewriter",
    "every-curve-flat": "a-sweep-before-a-long-run",
    "every-curve-blows-up": "a-quick-sweep",
    "one-flat-one-gone": "a-quick-sweep",
    "nan-after-forty-steps": "nan-some-way-in",
    "confident-then-nan": "nan-some-way-in",
    "nan-on-one-batch": "a-nan-to-hunt",
    "frozen-features": "a-fresh-head",
    "swapped-head": "a-suspicious-checkpoint",
    "stuck-at-one-point-four": "a-sanity-check",
    "regression-plateau": "an-adapted-loop",
    "noisy-floor": "a-colleagues-overfit-check",
    "validation-as-good-as-training": "merged-exports",
    "validation-turns-back-up": "a-wide-mlp-on-noisy-labels",
    "a-small-steady-gap": "two-flat-curves",
    "wobbling-flat-loss": "a-new-training-script",
    "stuck-at-three-quarters": "a-one-line-change",
    "learns-then-lurches": "after-a-refactor",
    "validation-far-below": "a-colleagues-validation-set",
    "restless-validation": "your-own-loop",
}


@cache
def _pool() -> tuple[tuple[Case, ...], tuple[Case, ...]]:
    """(offered, retired), from every drill's cases package."""
    offered: list[Case] = []
    retired: list[Case] = []
    for drill_package in sorted(pkgutil.iter_modules(drills.catalog.__path__)):
        name = f"drills.catalog.{drill_package.name}.cases"
        if importlib.util.find_spec(name) is None:
            continue
        module = importlib.import_module(name)
        offered.extend(module.CASES)
        retired.extend(getattr(module, "RETIRED_CASES", ()))
    keys = [case.key for case in (*offered, *retired)]
    duplicated = {key for key in keys if keys.count(key) > 1}
    if duplicated:
        raise RuntimeError(f"case keys used twice: {sorted(duplicated)}")
    return tuple(offered), tuple(retired)


def all_cases() -> tuple[Case, ...]:
    """The cases the pool offers, in catalogue order."""
    return _pool()[0]


def retired_cases() -> tuple[Case, ...]:
    return _pool()[1]


def is_offered(key: str) -> bool:
    return any(case.key == key for case in all_cases())


def get_case(key: str) -> Case:
    """A case by key, offered or retired (an old key leads to the case that took it over)."""
    key = RENAMED.get(key, key)
    for case in (*all_cases(), *retired_cases()):
        if case.key == key:
            return case
    raise UnknownCase(key)


def all_case_sets() -> tuple[CaseSet, ...]:
    seen: dict[str, CaseSet] = {}
    for case in all_cases():
        seen.setdefault(case.case_set.drill, case.case_set)
    return tuple(seen.values())
