"""Does every cause of a case set read as planted on seeds nobody tuned it on?

A case is answered right when the learner names the planted cause, and a round shows a run of
a cause as a variant whose verdict it claims: both are fair only if a run with the cause planted
reads as the cause's verdict on every draw, not only on the seeds the tables were built from.
The audit runs every cause of every case set (the causes cases draw, and the variants rounds
show) on random seeds at both ends of every nuisance range, and counts the runs whose drill
verdict is not the cause's. Each miss comes with the command that replays it. (Such audits
found a copied validation split that read "inconclusive" on 39 of 40 draws, and a trimmed one
that missed on 1 draw in 20.)

`python -m drills cases audit [--drill SLUG] [--cause KEY] [--seeds N] [--origin S] [--jobs J]`.
"""

from __future__ import annotations

import multiprocessing
import random
from collections.abc import Iterable, Iterator, Mapping
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from drills.cases.contract import CaseSet
from drills.cases.draw import SEED_RANGE
from drills.cases.outcomes import CUT_SHORT, nuisance_corners
from drills.core.command import replay_command

ORIGIN = 777  # the default seed of the seeds' own generator, so a report can be repeated


@dataclass(frozen=True)
class Planted:
    """One cause as a draw plants it: its knobs over the set's base and one nuisance corner."""

    case_set: CaseSet
    cause: str
    corner: Mapping[str, Any]

    @property
    def knobs(self) -> dict[str, Any]:
        cause = self.case_set.cause(self.cause)
        return {**self.case_set.base, **self.corner, **cause.knobs}

    @property
    def verdict(self) -> str:
        return self.case_set.cause(self.cause).verdict

    def label(self) -> str:
        knobs = self.knobs  # the cause's own value where it overrides the corner's
        corner = ", ".join(f"{name}={knobs[name]}" for name in sorted(self.corner))
        return f"{self.case_set.drill} {self.cause} ({corner or 'no nuisance'})"


@dataclass(frozen=True)
class Miss:
    seed: int
    reading: str  # the drill's verdict, or the run's status when it did not end ok
    command: str  # replays the run


@dataclass(frozen=True)
class Row:
    planted: Planted
    runs: int
    misses: tuple[Miss, ...]


def planted(case_sets: Iterable[CaseSet]) -> list[Planted]:
    """Every cause of the case sets at each nuisance corner (one, where a cause sets every
    nuisance knob itself)."""
    found: dict[tuple[str, str, str], Planted] = {}
    for case_set in case_sets:
        for cause in case_set.causes:
            for corner in nuisance_corners(case_set):
                entry = Planted(case_set, cause.key, corner)
                key = (case_set.drill, cause.key, repr(sorted(entry.knobs.items())))
                found.setdefault(key, entry)
    return list(found.values())


def random_seeds(count: int, origin: int = ORIGIN) -> list[int]:
    """`count` seeds from the range a case's draw takes them from, the same for the same origin."""
    generator = random.Random(origin)
    return [generator.randrange(SEED_RANGE) for _ in range(count)]


def read(drill: str, knobs: Mapping[str, Any], seed: int) -> str:
    """One real run's verdict, as the runner read it into the record. Its status instead when
    the machine cut it short (not the cause's doing) or it crashed before producing numbers
    to read (the runner then reads nothing)."""
    from drills.core.runner import run_drill

    record = run_drill(drill, knobs, seed)
    if record["status"] in CUT_SHORT or record["observed"] is None:
        return f"status {record['status']}"
    return str(record["observed"])


def audit(entries: Iterable[Planted], seeds: Iterable[int], *, jobs: int = 1) -> Iterator[Row]:
    """A row per planted cause, in order, as soon as all its seeds have run."""
    seeds, entries = tuple(seeds), list(entries)
    work = [(entry.case_set.drill, entry.knobs, seed) for entry in entries for seed in seeds]
    if jobs <= 1:
        yield from _rows(entries, seeds, map(_read, work))
        return
    # Each run keeps to one thread (the runner sets it), so J processes use J cores. Spawned,
    # not forked: a fork of a process that has started torch's threads can hang.
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context) as pool:
        yield from _rows(entries, seeds, pool.map(_read, work, chunksize=1))


def _rows(entries: list[Planted], seeds: tuple[int, ...], readings: Iterator[str]) -> Iterator[Row]:
    for entry in entries:
        misses = []
        for seed in seeds:
            reading = next(readings)
            if reading != entry.verdict:
                command = replay_command(entry.case_set.drill, entry.knobs, seed)
                misses.append(Miss(seed, reading, command))
        yield Row(entry, len(seeds), tuple(misses))


def _read(work: tuple[str, dict[str, Any], int]) -> str:
    return read(*work)
