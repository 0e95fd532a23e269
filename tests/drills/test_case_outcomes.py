"""The outcome table credits only what a learner can see: wherever it says an experiment tells
two causes apart, the evidence the case page shows of that experiment differs between them.

(The table once credited the health tables of break-the-graph and optimizer-membership with
separating causes whose tables were byte-identical: the drill's diagnose() read hidden numbers.)
"""

from __future__ import annotations

import dataclasses
import json
from itertools import combinations
from typing import Any

import pytest

from drills.cases import outcomes
from drills.cases.contract import NO_CHANGE, CaseSet
from drills.cases.evidence import visible
from drills.cases.parameter_table import table_reading
from drills.cases.registry import all_case_sets, get_case


@pytest.mark.slow
@pytest.mark.parametrize("case_set", all_case_sets(), ids=lambda case_set: case_set.drill)
def test_a_credited_separation_shows_on_the_page(case_set: CaseSet) -> None:
    corner = outcomes.nuisance_corners(case_set)[0]
    records: dict[str, dict[str, Any]] = {}  # experiments that change nothing share one run
    for experiment in case_set.experiments:
        shown = {
            cause.key: visible(
                case_set,
                experiment,
                outcomes.shared_record(
                    records,
                    case_set,
                    outcomes.setting(case_set, cause.knobs, experiment.change, corner),
                    0,
                ),
            )
            for cause in case_set.causes
        }
        for first, second in combinations(shown, 2):
            if outcomes.separates(case_set, experiment.key, first, [second]):
                assert shown[first] != shown[second], (experiment.key, first, second)


def test_a_run_cut_short_by_the_machine_is_never_read_into_a_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A run that hit its time limit says nothing about its cause: the rebuild stops, naming it."""
    case_set = all_case_sets()[0]
    cause = case_set.causes[0]
    record = {"status": "timed_out", "error": "time limit of 60 s exceeded", "signature": {}}
    monkeypatch.setattr("drills.core.runner.run_drill", lambda *args, **kwargs: record)
    corner = outcomes.nuisance_corners(case_set)[0]
    with pytest.raises(outcomes.RunCutShort, match="seed 3 ended timed_out: time limit"):
        outcomes.run_reading(case_set, cause.knobs, NO_CHANGE, 3, corner, None)


def test_a_health_table_reads_as_its_columns_say() -> None:
    rows: list[dict[str, str | float | bool]] = [
        {"name": "backbone.0.weight", "grad": "none", "update_norm": 0.0},
        {"name": "backbone.0.bias", "grad": "none", "update_norm": 0.0},
        {"name": "head.weight", "grad": "finite", "in_optimizer": False, "update_norm": 0.0},
        {"name": "head.bias", "grad": "finite", "update_norm": 1e-3},
    ]
    assert table_reading(rows) == (
        "backbone: grad-none,still | head: grad-finite,moved / grad-finite,not-in-optimizer,still"
    )
    # Magnitudes are not read: a larger step says nothing without a baseline on the page.
    bigger = [row | {"update_norm": (row["update_norm"] or 0) * 10} for row in rows]
    assert table_reading(bigger) == table_reading(rows)
    assert table_reading([]) == "no-parameters"


def test_a_reading_that_differs_beyond_seed_four_separates_nothing() -> None:
    """Built on seeds 0-4, the table credited loss-spikes' replay of the worst spike with telling
    a too-large rate from a corrupt batch: the rate's replay read "both batches alike" on all
    five, and "the suspect batch jumps again" on seeds 5, 6, 7 and 9 (replayed from the epoch's
    checkpoint, the batch that spiked can still score far worse than a normal one). The tables
    are built on ten seeds (outcomes.SEEDS)."""
    case_set = next(item for item in all_case_sets() if item.drill == "loss-spikes")
    cause = case_set.cause("steps-too-large")
    replay = next(item for item in case_set.experiments if item.key == "replay-from-checkpoint")
    corner = outcomes.nuisance_corners(case_set)[0]
    readings = {
        outcomes.run_reading(case_set, cause.knobs, replay.change, seed, corner, replay)[0]
        for seed in (0, 5)
    }
    assert readings == {"both-batches-alike", "suspect-batch-jumps-again"}
    assert outcomes.SEEDS > 5
    assert outcomes.reading(case_set, cause.key, replay.key) == outcomes.VARIES
    assert not outcomes.separates(case_set, replay.key, cause.key, ["corrupt-batch"])


DOUBLE_SHIFT = get_case("a-borrowed-data-loader").case_set


def test_the_corners_meet_both_ends_of_a_number_and_every_named_value() -> None:
    numbers = dataclasses.replace(DOUBLE_SHIFT, nuisance={"steps": (200, 250, 300)})
    assert outcomes.nuisance_corners(numbers) == [{"steps": 200}, {"steps": 300}]
    named = dataclasses.replace(
        DOUBLE_SHIFT,
        nuisance={"steps": (200, 250, 300), "text": ("two-successors", "coin", "dice", "more")},
    )
    assert outcomes.nuisance_corners(named) == [
        {"steps": 200, "text": "two-successors"},
        {"steps": 300, "text": "more"},
        {"steps": 300, "text": "coin"},  # the middle values, the other knobs at their last
        {"steps": 300, "text": "dice"},
    ]
    texts = {corner["text"] for corner in outcomes.nuisance_corners(DOUBLE_SHIFT)}
    assert texts == set(DOUBLE_SHIFT.nuisance["text"])  # a draw meets no text the table missed
    single = dataclasses.replace(DOUBLE_SHIFT, nuisance={"steps": (300,)})
    assert outcomes.nuisance_corners(single) == [{"steps": 300}]


def test_a_rebuild_runs_each_setting_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three of double-shift's four experiments change nothing and read one run."""
    runs: list[tuple[str, int]] = []

    def run_drill(drill: str, knobs: dict[str, Any], seed: int) -> dict[str, Any]:
        runs.append((json.dumps(knobs, sort_keys=True), seed))
        return {"status": "ok", "signature": {"final_loss": knobs["steps"] / 1000}}

    monkeypatch.setattr("drills.core.runner.run_drill", run_drill)
    table = outcomes.build(DOUBLE_SHIFT, seeds=(0, 1))
    corners = len(outcomes.nuisance_corners(DOUBLE_SHIFT))
    changes = {repr(experiment.change) for experiment in DOUBLE_SHIFT.experiments}
    assert len(changes) == 2
    assert len(runs) == len(set(runs)) == len(DOUBLE_SHIFT.causes) * 2 * corners * len(changes)
    # The readings are still each experiment's own: the longer run reads its 600 steps (0.6,
    # on ln 2), a shared one would read 0.2-0.3 (below it).
    assert {row["train-four-times-longer"] for row in table.values()} == {"settles-at-the-floor"}
