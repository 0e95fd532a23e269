"""The symptom alone must not decide a case's cause (drills/cases/symptoms.py), measured on the
stored features of real runs: five draws per cause, both ends of every nuisance range.

No case may decide on any draw. Where the causes of a set differed on the first screen by
construction (a run that crashes, a task only one cause uses, a loss at zero against one at
chance), each such cause got a look-alike: most are the very same run by construction (the same
sets, batches and masks, a bug the curves cannot see), told apart only by what an experiment
measures.
"""

from __future__ import annotations

import math

import pytest

from drills.cases import symptoms
from drills.cases.contract import Case, CaseSet
from drills.cases.registry import all_case_sets, all_cases
from drills.cases.symptoms import consistent, deciding_share

CASES = all_cases()


def test_the_symptom_table_holds_five_draws_of_every_cause() -> None:
    table = symptoms.stored_table()
    for case_set in all_case_sets():
        rows = table[case_set.drill]
        assert set(rows) == {cause.key for cause in case_set.causes}, case_set.drill
        assert all(len(draws) == len(symptoms.SEEDS) for draws in rows.values()), case_set.drill


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.key)
def test_the_symptom_alone_decides_no_draw(case: Case) -> None:
    """Every case: each draw of each cause is consistent with another cause of the case.
    `python -m drills cases why CASE` names the draws that stand out and the numbers that
    set them apart."""
    assert symptoms.case_share(case) == 0.0


def test_a_draw_outside_every_other_causes_range_decides() -> None:
    table = {
        "a": [{"last:loss": 0.0, "raised": "no"}, {"last:loss": 0.1, "raised": "no"}],
        "b": [{"last:loss": 1.4, "raised": "no"}, {"last:loss": 1.3, "raised": "no"}],
        "c": [{"last:loss": 0.02, "raised": "no"}, {"last:loss": 0.09, "raised": "no"}],
    }
    assert deciding_share(["a", "b"], table) == 1.0
    assert deciding_share(["a", "c"], table) == 0.0  # each one's draws fall in the other's range
    assert deciding_share(["a", "b", "c"], table) == 2 / 6  # b's two draws give b away
    # Within the tolerance of a range counts as inside it; a different category never does.
    assert consistent({"last:loss": 1.42}, table["b"])
    assert not consistent({"last:loss": 1.6}, table["b"])
    assert not consistent({"last:loss": 1.35, "raised": "yes"}, table["b"])
    # Each end is widened by its own size: a range over orders of magnitude (a loss that
    # overflowed on every draw) does not take in an ordinary loss, as a 10% of its top would.
    overflowed = [{"last:loss": 1.3e13, "raised": "no"}, {"last:loss": 4.7e22, "raised": "no"}]
    assert not consistent({"last:loss": 0.1, "raised": "no"}, overflowed)
    assert consistent({"last:loss": 1.2e13, "raised": "no"}, overflowed)
    assert not consistent(
        {"last:loss": 0.8, "raised": "no"}, [{"last:loss": 1.0}, {"last:loss": 9.0}]
    )
    # A loss gone non-finite (None) matches only another non-finite loss.
    assert not consistent({"last:loss": None}, table["b"])
    assert consistent({"last:loss": None}, [{"last:loss": None}])


def case_set_of(drill: str) -> CaseSet:
    (case_set,) = [each for each in all_case_sets() if each.drill == drill]
    return case_set


def test_a_series_ends_where_its_last_tenth_settles_not_at_its_last_batch() -> None:
    """One noisy last batch is not where a curve ends: the eye reads the level it settles at."""
    case_set = case_set_of("silent-no-learning")
    settles = [[step, 2.0 - step / 100] for step in range(100)]  # ends near 1.0
    settles[-1][1] = 3.0  # one bad last batch
    found = symptoms.features(case_set, {"metrics": {"loss": settles}})
    assert found["first:training loss"] == 2.0
    # Steps 90..98 fall from 1.10 to 1.02; the median of them and the 3.0 is 1.065.
    assert found["last:training loss"] == pytest.approx(1.065)
    # A short series (under 20 points) ends at its last point.
    found = symptoms.features(case_set, {"metrics": {"loss": [[0, 2.0], [1, 1.5], [2, 3.0]]}})
    assert found["last:training loss"] == 3.0


def test_a_run_is_seen_to_end_where_its_x_axis_ends() -> None:
    """300 steps against 150 shows on the x-axis whatever the curve does: padding-masks gave two
    causes away so, drawn on a chart of the data that looks the same under every cause."""
    case_set = case_set_of("silent-no-learning")
    long, short = (
        symptoms.features(case_set, {"metrics": {"loss": [[step, 1.0] for step in range(steps)]}})
        for steps in (300, 150)
    )
    assert (long["span:training loss"], short["span:training loss"]) == (299.0, 149.0)
    assert {name for name in long if long[name] != short[name]} == {"span:training loss"}
    assert not consistent(long, [short, short])


def test_two_series_of_a_chart_are_read_against_each_other() -> None:
    """Validation ending on top of training or well below it is seen at a glance, whatever the
    levels: on a linear axis as a share of the chart's height, on a log axis as a ratio."""
    linear = case_set_of("val-below-train")
    curves = {
        "train_online": [[0, 1.3], [1, 0.9], [2, 0.5]],  # the chart spans 1.3 - 0.3 = 1.0
        "val": [[0, 1.2], [1, 0.6], [2, 0.3]],
    }
    found = symptoms.features(linear, {"metrics": curves})
    assert found["gap:training (as logged)|validation"] == pytest.approx(0.2)
    log = case_set_of("mixed-precision")
    curves = {"set_loss": [[0, 1.0], [1, 0.03]], "float32_set_loss": [[0, 1.0], [1, 0.01]]}
    found = symptoms.features(log, {"metrics": curves})
    assert found["ratio:training loss|training loss of the float32 loop"] == pytest.approx(3.0)
    assert not [name for name in found if name.startswith("gap:")]


def test_two_noisy_curves_whose_ends_overlap_end_together() -> None:
    """A gap within the curves' own spread over their last tenth is not seen as a gap."""
    case_set = case_set_of("val-below-train")
    wobble = [0.0, 0.1, -0.1, 0.05] * 10  # 40 points: a last tenth of 4
    curves = {
        "train_online": [[step, 2.0 + noise] for step, noise in enumerate(wobble)],
        "val": [[step, 2.02 + noise] for step, noise in enumerate(wobble)],
    }
    found = symptoms.features(case_set, {"metrics": curves})
    assert found["gap:training (as logged)|validation"] == 0.0
    # Apart by more than their spread: only what lies beyond it counts. Each last tenth spreads
    # 0.08125 either way of its median (half of 2.0875 - 1.925); 0.5 apart, on a chart 0.7 high.
    curves["val"] = [[step, 2.5 + noise] for step, noise in enumerate(wobble)]
    found = symptoms.features(case_set, {"metrics": curves})
    assert found["gap:training (as logged)|validation"] == pytest.approx(-(0.5 - 0.1625) / 0.7)


@pytest.mark.slow
def test_the_stored_features_are_what_the_runs_show_today() -> None:
    """One draw of every cause of two sets, run again: the stored table is current."""
    table = symptoms.stored_table()
    for case_set in all_case_sets():
        if case_set.drill not in {"optimizer-membership", "silent-no-learning"}:
            continue
        rebuilt = symptoms.build(case_set, seeds=(0,))
        for cause, (features,) in rebuilt.items():
            stored = table[case_set.drill][cause][0]
            assert stored.keys() == features.keys(), cause
            for name, value in features.items():
                if isinstance(value, float):
                    assert math.isclose(value, stored[name], rel_tol=1e-4, abs_tol=1e-6), name
                else:
                    assert value == stored[name], name
