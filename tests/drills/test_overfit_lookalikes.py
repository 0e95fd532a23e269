"""The overfit drill's look-alike bugs (issue 27 point 3): a loop that fetches a new batch at
every step stalls at chance as re-shuffled labels do; an output pooled over the batch settles
at the target variance as a broadcast prediction does; a batch sliced empty fails as a fully
masked one does; a model whose dropout and noise ignore eval mode trains step for step as a loop
that leaves them on. Each keeps its own mechanism, and the evidence that tells it from its
twin."""

import functools
import math
from typing import Any

import pytest

from drills.cases.readings import eval_twice
from drills.catalog.overfit_one_batch.cases.readings import (
    batch_against_first,
    clean_remeasure,
    loader_calls,
    what_the_loss_compares,
)
from tests.drills.runs import run_drill

SEEDS = range(5)
SLUG = "overfit-one-batch"


@functools.cache
def record(bug: str, seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run_drill(SLUG, {"bug": bug, **knobs}, seed)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_new_batch_every_step_stalls_at_chance_and_the_batch_check_sees_it(seed: int) -> None:
    run = record("fresh-batch-each-step", seed)
    sig = run["signature"]
    assert sig["final_loss"] == pytest.approx(math.log(4), rel=0.1)  # nothing carries over
    assert sig["batch_changed_steps"] == sig["steps_run"] - 1  # every step after the first
    assert run["observed"] == "batch-drifts"
    # The twin it mimics: the same height, but on a batch that never changes.
    shuffled = record("shuffled-labels", seed)["signature"]
    assert shuffled["batch_changed_steps"] == 0
    assert sig["final_loss"] == pytest.approx(shuffled["final_loss"], rel=0.05)
    # And what changed is the whole batch, labels too, where an edit in place moves features.
    assert sig["changed_tensors"] == "features, labels"
    assert batch_against_first(sig, None) == "labels-change-too"
    edited = record("batch-edited-in-place", seed)["signature"]
    assert edited["changed_tensors"] == "features"
    assert batch_against_first(edited, None) == "features-change"
    assert batch_against_first(shuffled, None) == "same-at-every-step"


@pytest.mark.parametrize(
    ("seed", "knobs"),
    [
        (0, {}),
        (1, {}),
        (2, {}),
        # The knobs' edges: one example, no step size, the longest run, a rate that blows up.
        (0, {"examples": 1}),
        (0, {"lr": 0.0}),
        (0, {"steps": 2000}),
        (0, {"lr": 10.0}),
    ],
)
def test_rows_sliced_with_the_step_train_as_a_new_batch_every_step(
    seed: int, knobs: dict[str, Any]
) -> None:
    """The table the sliced loop reads holds, in order, the very batches a loader called at
    every step draws: the curves are equal bit for bit and the verdict is the same. Only the
    loader's calls, counted where the loop makes them, differ."""
    sliced = record("slice-moves-each-step", seed, **knobs)
    fetched = record("fresh-batch-each-step", seed, **knobs)
    assert sliced["metrics"] == fetched["metrics"]
    assert sliced["observed"] == fetched["observed"]
    differ = {
        key
        for key, value in sliced["signature"].items()
        if value != fetched["signature"][key] and value == value  # NaN is NaN
    }
    assert differ == {"loader_calls"}
    assert sliced["signature"]["loader_calls"] == 1
    assert fetched["signature"]["loader_calls"] == fetched["signature"]["steps_run"]
    assert loader_calls(sliced["signature"], None) == "called-once"
    assert loader_calls(fetched["signature"], None) == "called-again"
    assert loader_calls(record("none", seed)["signature"], None) == "called-once"


@pytest.mark.parametrize("seed", SEEDS)
def test_an_output_pooled_over_the_batch_settles_where_a_broadcast_does(seed: int) -> None:
    pooled, broadcast = record("batch-averaged-output", seed), record("broadcast-target", seed)
    sig = pooled["signature"]
    assert sig["final_loss"] == pytest.approx(sig["target_variance"], rel=0.05)
    assert sig["final_loss"] == pytest.approx(broadcast["signature"]["final_loss"], rel=0.01)
    assert sig["prediction_rows"] == 1
    assert broadcast["signature"]["prediction_rows"] == 8
    assert pooled["inputs"]["shapes"]["prediction"] == [1]
    assert pooled["observed"] == "batch-averaged"
    assert broadcast["observed"] == "shape-broadcast"
    reading = what_the_loss_compares
    assert reading(sig, None) == "one-score-for-the-batch"
    assert reading(broadcast["signature"], None) == "one-score-per-example"


def test_a_pooled_output_on_one_example_fits() -> None:
    # The mean of one prediction is that prediction: nothing to see with a single example.
    run = record("batch-averaged-output", examples=1)
    assert run["signature"]["final_loss"] < 0.05
    assert run["observed"] == "fits"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_batch_sliced_empty_fails_as_a_masked_one_does(seed: int) -> None:
    empty, masked = record("empty-slice", seed), record("all-padding", seed)
    assert empty["status"] == masked["status"] == "error"
    assert "no supervised targets" in empty["error"]
    assert "holds no example" in empty["error"]
    assert empty["metrics"] == masked["metrics"] == {}
    assert empty["signature"]["supervised_targets"] == 0
    assert empty["inputs"]["shapes"]["features"] == [0, 16]
    assert empty["observed"] == masked["observed"] == "nothing-supervised"
    assert what_the_loss_compares(empty["signature"], empty["error"]) == "no-example-in-batch"
    assert what_the_loss_compares(masked["signature"], None) == "every-target-masked"


@pytest.mark.parametrize("seed", range(3))
def test_randomness_built_into_the_model_trains_as_randomness_left_on(seed: int) -> None:
    """The same noise and the same dropout masks, drawn in the same order: the curves are equal
    bit for bit. Only eval mode, which the sound loop uses and the model ignores, differs."""
    built_in, left_on = record("randomness-built-in", seed), record("randomness-on", seed)
    assert built_in["metrics"] == left_on["metrics"]
    mine, theirs = built_in["signature"], left_on["signature"]
    assert mine["final_loss"] == theirs["final_loss"] > 0.1
    # Two eval-mode passes over the clean batch: the same outputs only where eval mode works.
    assert (mine["eval_repeatable"], theirs["eval_repeatable"]) == (False, True)
    assert (eval_twice(mine, None), eval_twice(theirs, None)) == ("outputs-differ", "same-outputs")
    assert clean_remeasure(theirs, None) == "clean-far-below-training"
    # The loop adds no noise of its own: the model is handed the batch itself.
    assert (mine["inputs_augmented"], theirs["inputs_augmented"]) == (False, True)
    assert (built_in["observed"], left_on["observed"]) == ("randomness-built-in", "randomness")


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize(
    ("knobs", "expected"),
    [
        ({}, "randomness-built-in"),
        # However far the weights move, eval mode stays noisy: nothing moves at lr 0, and one
        # example is learnt through the noise.
        ({"lr": 0.0}, "randomness-built-in"),
        ({"examples": 1}, "randomness-built-in"),
        ({"steps": 2000}, "randomness-built-in"),
        # A rate that blows the loss up is read first, as it is for randomness left on.
        ({"lr": 10.0}, "learning-rate"),
    ],
)
def test_randomness_built_in_reads_so_at_the_edges(
    knobs: dict[str, Any], expected: str, seed: int
) -> None:
    assert record("randomness-built-in", seed, **knobs)["observed"] == expected


def test_a_sound_model_answers_eval_mode_the_same_twice() -> None:
    for bug in ("none", "randomness-on", "randomness-reseeded", "shuffled-labels"):
        assert record(bug)["signature"]["eval_repeatable"] is True, bug
