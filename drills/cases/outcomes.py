"""What each experiment shows under each candidate cause, read from real runs.

Scoring asks whether an experiment a learner chose could tell their leading hypothesis from
their alternatives. That is decidable because every (cause, experiment) pair of a case set has
been run for real: `build` runs each one over SEEDS seeds at both ends of every nuisance range
and keeps the reading when they all agree, VARIES when they do not (such an experiment
separates nothing). The table is stored per drill, in drills/catalog/<drill>/cases/outcomes.json
(`python -m drills cases outcomes --write` rebuilds it).

Ten seeds, not five: rebuilt on seeds 0-9, loss-spikes' replay of a too-large rate's worst
spike read "the suspect batch jumps again" on 8 of 20 seeds where seeds 0-4 had all read "both
batches alike", so the table credited that replay with telling the rate from a corrupt batch.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from drills.cases import tables
from drills.cases.contract import CaseSet, Change, Experiment
from drills.core.knobs import resolve_knobs

TABLE = "outcomes"
SEEDS = 10  # seeds 0..SEEDS-1, each at both ends of every nuisance range (see the module's text)
VARIES = "varies"
# Statuses a run ends with when the machine, not the cause, cut it short: a table row read from
# one would record the machine's load (a busy machine once made optimizer-membership's runs hit
# their 60 s limit and read as "raised").
CUT_SHORT = ("timed_out", "resource_limit", "cancelled")


class RunCutShort(RuntimeError):
    """A table run ended on a limit: rebuild on a quieter machine rather than store it."""


Table = dict[str, dict[str, dict[str, str]]]  # drill -> cause -> experiment -> reading


def nuisance_corners(case_set: CaseSet) -> list[dict[str, Any]]:
    """The settings a reading must hold for: every nuisance knob at its first value, then at its
    last (the extremes of the ranges a draw picks from), then each middle value of a range of
    named values, the other knobs at their last. A number in the middle of its range lies
    between two ends that were both met; a named value (a text, an optimizer) lies between
    nothing, and a draw meets it as often as the ends."""
    first = {name: values[0] for name, values in case_set.nuisance.items()}
    last = {name: values[-1] for name, values in case_set.nuisance.items()}
    corners = [first] if first == last else [first, last]
    for name, values in case_set.nuisance.items():
        if not all(_is_number(value) for value in values):
            corners += [{**last, name: value} for value in values[1:-1]]
    return corners


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def setting(
    case_set: CaseSet, cause_knobs: Mapping[str, Any], change: Change, nuisance: Mapping[str, Any]
) -> dict[str, Any]:
    """The knobs of one run: the set's base, the nuisance, the cause, then the change."""
    return change.apply({**case_set.base, **nuisance, **cause_knobs})


def run_reading(
    case_set: CaseSet,
    cause_knobs: Mapping[str, Any],
    change: Change,
    seed: int,
    nuisance: Mapping[str, Any],
    experiment: Experiment | None,
) -> tuple[str, dict[str, Any]]:
    """One real run: (its reading, its record). `experiment` None reads with the drill's own
    diagnose(); the knobs are the set's base, the nuisance, the cause, then the change."""
    record = run_record(case_set, setting(case_set, cause_knobs, change, nuisance), seed)
    return read_record(case_set, experiment, record), record


def run_record(case_set: CaseSet, knobs: dict[str, Any], seed: int) -> dict[str, Any]:
    from drills.core.runner import run_drill

    resolve_knobs(case_set.drill_object, knobs)  # a bad case set fails here, by name
    record = run_drill(case_set.drill, knobs, seed)
    if record.get("status") in CUT_SHORT:
        raise RunCutShort(
            f"{case_set.drill} {knobs} seed {seed} ended {record['status']}: {record.get('error')}"
        )
    return record


def shared_record(
    records: dict[str, dict[str, Any]], case_set: CaseSet, knobs: dict[str, Any], seed: int
) -> dict[str, Any]:
    """run_record once per (knobs, seed) among `records`: experiments that change nothing read
    one and the same run. (A run is a function of its knobs and seed, so sharing it changes no
    reading.)"""
    key = json.dumps([knobs, seed], sort_keys=True)
    if key not in records:
        records[key] = run_record(case_set, knobs, seed)
    return records[key]


def read_record(case_set: CaseSet, experiment: Experiment | None, record: Mapping[str, Any]) -> str:
    if experiment is None:
        return case_set.drill_object.diagnose(record.get("signature") or {}, record.get("error"))
    return case_set.read(experiment, record)


def build(case_set: CaseSet, seeds: Iterable[int] = (0, 1)) -> dict[str, dict[str, str]]:
    table: dict[str, dict[str, str]] = {}
    seeds = tuple(seeds)
    corners = nuisance_corners(case_set)
    for cause in case_set.causes:
        records: dict[str, dict[str, Any]] = {}
        row: dict[str, str] = {}
        for experiment in case_set.experiments:
            readings = set()
            for seed in seeds:
                for nuisance in corners:
                    knobs = setting(case_set, cause.knobs, experiment.change, nuisance)
                    record = shared_record(records, case_set, knobs, seed)
                    readings.add(read_record(case_set, experiment, record))
            row[experiment.key] = readings.pop() if len(readings) == 1 else VARIES
        table[cause.key] = row
    return table


@cache
def stored_table() -> Table:
    loaded: Table = tables.load(TABLE)
    return loaded


def write_table(table: Table) -> None:
    tables.write(TABLE, table)
    stored_table.cache_clear()


def reading(case_set: CaseSet, cause: str, experiment: str) -> str:
    """The stored reading of `experiment` under `cause` (VARIES when none is stored)."""
    return stored_table().get(case_set.drill, {}).get(cause, {}).get(experiment, VARIES)


def separates(
    case_set: CaseSet, experiment: str, leading: str, alternatives: Iterable[str]
) -> bool:
    """Whether the experiment's reading under `leading` differs from its reading under every
    alternative (and none of them varies from run to run). With no alternatives it separates
    nothing: a test is chosen to tell hypotheses apart."""
    alternatives = [alternative for alternative in alternatives if alternative != leading]
    if not alternatives:
        return False
    expected = reading(case_set, leading, experiment)
    if expected == VARIES:
        return False
    for alternative in alternatives:
        other = reading(case_set, alternative, experiment)
        if other == VARIES or other == expected:
            return False
    return True
