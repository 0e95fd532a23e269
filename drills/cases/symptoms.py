"""Whether a case's symptom alone gives its cause away, measured on real runs.

A case draws its cause from a few look-alikes; the experiments are meant to tell them apart. If
the symptom run (what the case page shows before any experiment: the case's charts and its
symptom numbers) already looked different under each cause, a learner could name the cause
from the first screen. So every cause of a case set is run on a few draws, and what a learner
sees of each run is boiled down to its features:

- each number the symptom shows, and each shown series' first value, where it ends, and the
  step it ends at (a run of 300 steps is seen against one of 150 on the x-axis), as a number
  (None when it is not finite: "the loss went to NaN" is what the learner sees). Where
  a series ends is the median of its last tenth: a per-batch curve's last point is one batch's
  noise, which no learner reads a cause from, while the level the curve settles at is what
  the eye takes in;
- for every two series of one chart, where they end against each other, as the eye reads the
  chart: on a linear axis the gap between their end levels as a share of the chart's height
  (validation ending above training or on top of it is the first thing anyone looks at), on a
  log axis the ratio of their end levels; either counts only what lies beyond the curves'
  spread over their last tenth;
- whether the run raised (what PyTorch raised is shown; the drill's own text is not).

A draw under cause A is *consistent with* cause B when every categorical feature takes a value
some draw of B took and every number lies inside B's range over its draws, each end widened
by `TOLERANCE` of itself and `FLOOR` (a learner with one draw in front of them cannot tell a
few per cent apart). Each end by its own size: a range that spans orders of magnitude (a loss
that overflowed to 1e13 on one draw and 1e22 on another) does not reach down to 0.1. A
draw *decides* when it is consistent with no other cause of its case. Every case must have a
share of deciding draws of 0 (tests/drills/test_case_symptoms.py).

The features of every (cause, draw) are stored per drill, in
drills/catalog/<drill>/cases/symptoms.json (`python -m drills cases symptoms --write`
rebuilds them); a slow test reruns one draw per cause and compares.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any

from drills.cases import tables
from drills.cases.contract import NO_CHANGE, Case, CaseSet
from drills.cases.evidence import series_label
from drills.cases.outcomes import nuisance_corners, run_reading
from drills.core.contract import series_label as contract_series_label

TABLE = "symptoms"
SEEDS = (0, 1, 2, 3, 4)
# Relative widening of a cause's range, plus an absolute floor for numbers near zero.
TOLERANCE = 0.10
FLOOR = 0.02

Features = dict[str, Any]  # feature name -> float | None (not finite) | str
Table = dict[str, dict[str, list[Features]]]  # drill -> cause -> one Features per draw


def features(case_set: CaseSet, record: Mapping[str, Any]) -> Features:
    """What a learner sees of a symptom run, as comparable features."""
    found: Features = {"raised": "yes" if record.get("error") else "no"}
    signature = record.get("signature") or {}
    for key in case_set.symptom_observations:
        found[f"number:{key}"] = _comparable(signature.get(key))
    metrics = record.get("metrics") or {}
    for metric, points in sorted(metrics.items()):
        label = series_label(case_set.charts, metric)
        if label is None or not points:
            continue
        found[f"first:{label}"] = _comparable(points[0][1])
        found[f"last:{label}"] = _comparable(_end_level([value for _, value in points]))
        found[f"span:{label}"] = _comparable(points[-1][0])
    for chart in case_set.charts:
        shown = {
            label: [value for _, value in points]
            for metric, points in sorted(metrics.items())
            if points and (label := contract_series_label(chart.series, metric)) is not None
        }
        found.update(_gaps(shown, log=chart.log_y))
    return found


def _gaps(shown: Mapping[str, Sequence[float]], log: bool) -> Features:
    """Where each two series of one chart end against each other (see the module's text).

    Two noisy curves whose last stretches overlap are seen to end together, whatever their
    medians say: the gap counts only what lies beyond both curves' spread there (half the
    interquartile range of each last tenth). Without that, two flat curves of pure noise, which
    plotly stretches over the whole chart, would differ by chance from draw to draw."""
    gaps: Features = {}
    if log:
        if any(value <= 0 for values in shown.values() for value in values):
            return gaps  # a log axis leaves such points out; no ratio is read from them
        shown = {label: [math.log(value) for value in values] for label, values in shown.items()}
    everything = [value for values in shown.values() for value in values]
    height = max(everything, default=0.0) - min(everything, default=0.0)
    for (first, one), (second, other) in itertools.combinations(sorted(shown.items()), 2):
        apart = _end_level(one) - _end_level(other)
        beyond = max(0.0, abs(apart) - _end_spread(one) - _end_spread(other))
        seen = math.copysign(beyond, apart)
        if log:
            gaps[f"ratio:{first}|{second}"] = math.exp(seen)
        elif height > 0:
            gaps[f"gap:{first}|{second}"] = seen / height
    return gaps


def _tail(values: Sequence[float]) -> Sequence[float]:
    """The last tenth of a series: its last point when it has under 20."""
    return values[-max(1, len(values) // 10) :]


def _end_level(values: Sequence[float]) -> float:
    """Where a series ends: the median of its last tenth. (Series points are always finite: the
    recorder refuses any other.)"""
    return statistics.median(_tail(values))


def _end_spread(values: Sequence[float]) -> float:
    """Half the interquartile range of a series' last tenth (0 under 4 points)."""
    tail = _tail(values)
    if len(tail) < 4:
        return 0.0
    low, _, high = statistics.quantiles(tail, n=4)
    return (high - low) / 2


def _comparable(value: Any) -> Any:
    if isinstance(value, bool) or value is None:
        return str(value)
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    return str(value)


def draws(case_set: CaseSet, seeds: Sequence[int] = SEEDS) -> list[tuple[int, dict[str, Any]]]:
    """The (seed, nuisance) draws a symptom is measured on: the seeds in turn, the nuisance
    corners (outcomes.nuisance_corners) in turn with them, so every corner is met."""
    corners = nuisance_corners(case_set)
    return [(seed, corners[index % len(corners)]) for index, seed in enumerate(seeds)]


def build(case_set: CaseSet, seeds: Sequence[int] = SEEDS) -> dict[str, list[Features]]:
    table: dict[str, list[Features]] = {}
    for cause in case_set.causes:
        table[cause.key] = [
            features(
                case_set, run_reading(case_set, cause.knobs, NO_CHANGE, seed, nuisance, None)[1]
            )
            for seed, nuisance in draws(case_set, seeds)
        ]
    return table


def consistent(draw: Features, others: Iterable[Features]) -> bool:
    """Whether one draw's features could have come from the cause whose draws are `others`."""
    return next(outside(draw, others), None) is None  # the first reason is enough


def outside(draw: Features, others: Iterable[Features]) -> Iterator[str]:
    """What in one draw the cause whose draws are `others` never showed: each number beyond that
    cause's widened range, each category it never took (none: the draw is consistent). Yielded
    one by one, so that a yes-or-no asks for the first only."""
    others = list(others)
    if not others:
        yield "no draws to hold it against"
        return
    for name, value in draw.items():
        seen = [other.get(name, "absent") for other in others]
        numbers = [item for item in seen if isinstance(item, float)]
        if isinstance(value, float):
            if not numbers:
                yield f"{name} = {value:.4g}, never a finite number there"
                continue
            low, high = _widened(min(numbers), -1), _widened(max(numbers), 1)
            if not low <= value <= high:
                yield f"{name} = {value:.4g}, outside {low:.4g} to {high:.4g}"
        elif value not in seen:
            yield f"{name} = {value}, never seen there"


def deciding_share(causes: Sequence[str], table: Mapping[str, Sequence[Features]]) -> float:
    """The share of the draws of `causes` that are consistent with none of the others."""
    total = deciding = 0
    for cause in causes:
        for draw in table.get(cause, ()):
            total += 1
            if not any(
                consistent(draw, table.get(other, ())) for other in causes if other != cause
            ):
                deciding += 1
    return deciding / total if total else 1.0


def look_alikes(
    cause: str, causes: Iterable[str], table: Mapping[str, Sequence[Features]]
) -> list[str]:
    """The other causes with which some draw of `cause` is consistent."""
    return [
        other
        for other in causes
        if other != cause
        and any(consistent(draw, table.get(other, ())) for draw in table.get(cause, ()))
    ]


@cache
def stored_table() -> Table:
    loaded: Table = tables.load(TABLE)
    return loaded


def write_table(table: Table) -> None:
    tables.write(TABLE, table)
    stored_table.cache_clear()


def case_share(case: Case) -> float:
    return deciding_share(case.causes, stored_table().get(case.case_set.drill, {}))


def _widened(end: float, direction: int) -> float:
    """One end of a range, moved outwards (direction -1 for the low end, 1 for the high)."""
    return end + direction * (TOLERANCE * abs(end) + FLOOR)
