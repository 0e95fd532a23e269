"""Curve-diagnosis rounds: which real run a round shows, drawn per learner and day.

A round shows the curves of one run of a drill variant without its knobs; the learner writes the
five-part diagnosis, and their leading hypothesis is scored against the drill's own diagnose() of
that run. The variants are the causes of the drills' case sets (drills/catalog/<drill>/cases/):
each is a setting of a drill's knobs whose verdict the pool's tests already hold over seeds and
nuisance settings, and the pool's nuisance ranges make the curves differ from draw to draw.

A variant's key names its cause: like a case's cause, it is not shown before the answer.
"""

from __future__ import annotations

import hashlib
import hmac
import random
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from functools import cache
from typing import Any

from drills.cases.contract import CaseSet
from drills.cases.registry import all_case_sets
from drills.core.knobs import resolve_knobs
from drills.core.registry import get_drill

# A learner should not meet the same variant twice within this many days.
REPEAT_AFTER_DAYS = 7
# Seeds stay well inside every drill's range and read easily in a replay command.
SEED_RANGE = 2**31


@dataclass(frozen=True)
class RoundVariant:
    key: str  # "<drill>/<cause>": stable; hidden until the learner has answered
    drill: str
    base: Mapping[str, Any]  # knob values under every draw
    nuisance: Mapping[str, tuple[Any, ...]]  # settings drawn per round; the verdict stays
    knobs: Mapping[str, Any]  # the cause's knobs, over the base and the nuisance
    diagnosis: str  # the hypothesis key the drill's diagnose() reads from any run of it
    family: str  # the cause family (drills.cases.contract.FAMILIES)


@dataclass(frozen=True)
class RoundDraw:
    variant: RoundVariant
    seed: int
    knobs: dict[str, Any]  # resolved by the drill: every knob, nuisance drawn

    def as_dict(self) -> dict[str, Any]:
        return {"variant": self.variant.key, "seed": self.seed, "knobs": self.knobs}


def _variants_of(case_set: CaseSet) -> list[RoundVariant]:
    return [
        RoundVariant(
            key=f"{case_set.drill}/{cause.key}",
            drill=case_set.drill,
            base=case_set.base,
            nuisance=case_set.nuisance,
            knobs=cause.knobs,
            diagnosis=cause.verdict,
            family=cause.family,
        )
        for cause in case_set.causes
    ]


@cache
def _catalogue() -> tuple[RoundVariant, ...]:
    found = [variant for case_set in all_case_sets() for variant in _variants_of(case_set)]
    return tuple(sorted(found, key=lambda variant: variant.key))


def all_variants() -> tuple[RoundVariant, ...]:
    """Every variant, sorted by key (the order the draw picks from)."""
    return _catalogue()


@cache
def known_variant_keys() -> frozenset[str]:
    return frozenset(variant.key for variant in _catalogue())


def get_variant(key: str) -> RoundVariant:
    for variant in _catalogue():
        if variant.key == key:
            return variant
    raise KeyError(f"unknown round variant {key!r}")


def recent_keys(shown: Iterable[tuple[date, str]], today: date) -> set[str]:
    """The variants among (day shown, key) pairs that are still too recent to show again."""
    since = today - timedelta(days=REPEAT_AFTER_DAYS - 1)
    return {key for day, key in shown if since <= day <= today}


def draw_round(
    learner_id: int, day: date, number: int, recent: Collection[str], *, key: bytes = b""
) -> RoundDraw:
    """The `number`-th round of a learner's day: the same inputs always give the same draw.

    `recent` holds the variants the learner saw in the last REPEAT_AFTER_DAYS days (see
    recent_keys); the draw avoids them while any other variant is left. `key` is a server
    secret: without it, a learner who knows their id could work out tomorrow's rounds."""
    message = f"round\x00{learner_id}\x00{day.isoformat()}\x00{number}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    fresh = [variant for variant in _catalogue() if variant.key not in recent]
    variant = rng.choice(fresh or list(_catalogue()))
    seed = rng.randrange(SEED_RANGE)
    # Sorted: the same draw whatever order the nuisance mapping was written in.
    nuisance = {name: rng.choice(variant.nuisance[name]) for name in sorted(variant.nuisance)}
    knobs = resolve_knobs(get_drill(variant.drill), {**variant.base, **nuisance, **variant.knobs})
    return RoundDraw(variant=variant, seed=seed, knobs=knobs)
