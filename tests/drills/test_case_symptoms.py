"""The symptom alone must not decide a case's cause (drills/cases/symptoms.py), measured on the
stored features of real runs: five draws per cause, both ends of every nuisance range.

Today most cases still fall short: the causes of many case sets differ on the first screen by
construction (a run that crashes, a task only one cause uses, a loss at zero against one at
chance). Their shares are listed below as debt: a case's share may only fall, and a case whose
share reaches 0 must leave the list. The one way up is a more faithful reading of what the
first screen shows, and the list says so where it happened.
"""

from __future__ import annotations

import math

import pytest

from drills.cases import symptoms
from drills.cases.contract import Case, CaseSet
from drills.cases.registry import all_case_sets, all_cases
from drills.cases.symptoms import consistent, deciding_share

CASES = all_cases()

# case key -> the share of its draws whose symptom alone decides the cause, at most.
STILL_DECIDES = {
    # Up (from 0.1, 0.4 and 0.067) when two curves of one chart came to be read against each
    # other, as anyone reads them (gap:/ratio: features): validation scored with dropout on ends
    # on top of training, the healthy run's well below it. (a-wide-mlp-on-noisy-labels, listed
    # with them, left the list when its small set memorised got a look-alike: many rows
    # repeating the same few examples.)
    # Up (0.267, 0.4, 0.267) when each end of a range came to be widened by its own size. Then
    # 0.2, 0.533 and 0.2 when the training subset went from 640 examples to 512, so that it
    # reads as fitted more often (at 640 it read as sound dropout on 4 of 20 random seeds at
    # dropout 0.3, and a learner who drew one was marked wrong for reading the run right; 512
    # still does on 19 of 300: tests/drills/test_case_strays.py).
    # Then a-colleagues-validation-set 0.533 -> 0.667 when the trimmed validation set kept what
    # the teacher is 70% sure of, not 62%, so that it reads as easier on every seed (at 0.62 it
    # read as sound dropout on 1 of 20 random seeds, at 0.66 on 1 of 60): its validation now
    # ends below every sound run's on all five draws.
    # Then 0.15, 0.35 and 0.15 when the memorised subset got a twin that trains on its very
    # examples as often (the same 512 repeated to fill 8,192 rows): of the subset's draws only
    # seed 0's still decides, its gap just beyond the twin's (-0.0183 against -0.0169). Then
    # a-colleagues-validation-set 0.08 when the trimmed split got a twin as well: the same set,
    # trimmed by a filter in the validation loader instead of in the file. Then
    # better-on-unseen-data and your-own-loop 0.08 when validation with dropout on got a twin
    # that validates with the very same masks: dropout built into the model, so eval mode does
    # not switch it off. What still decides: nothing-wrong's seed-1 draw (its gap 0.188, above
    # every other cause's) and the subset's seed-0 draw.
    "better-on-unseen-data": 0.08,
    "a-colleagues-validation-set": 0.08,
    "your-own-loop": 0.08,
}


def test_the_symptom_table_holds_five_draws_of_every_cause() -> None:
    table = symptoms.stored_table()
    for case_set in all_case_sets():
        rows = table[case_set.drill]
        assert set(rows) == {cause.key for cause in case_set.causes}, case_set.drill
        assert all(len(draws) == len(symptoms.SEEDS) for draws in rows.values()), case_set.drill


def test_the_debt_names_only_cases_the_pool_offers() -> None:
    """A case retired for deciding on sight leaves the list with it (a-quick-sweep did)."""
    assert set(STILL_DECIDES) <= {case.key for case in CASES}


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.key)
def test_the_symptom_decides_no_more_draws_than_listed(case: Case) -> None:
    share = symptoms.case_share(case)
    assert share <= STILL_DECIDES.get(case.key, 0.0) + 1e-9, (case.key, share)
    if case.key in STILL_DECIDES:
        assert share > 0, f"{case.key} no longer decides: take it off STILL_DECIDES"


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
