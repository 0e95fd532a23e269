import functools
import json
from typing import Any

import pytest
import torch
from torch import nn

from drills.catalog.optimizer_membership import EXCLUSIONS
from drills.catalog.optimizer_membership.train import has_grad_but_no_update, stale_tensors
from drills.core.knobs import KnobError, resolve_knobs
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2)
SLUG = "optimizer-membership"
drill = get_drill(SLUG)


@functools.cache
def run(exclude: str = "none", seed: int = 0) -> dict[str, Any]:
    return run_drill(SLUG, {"exclude": exclude}, seed)


def rows_by_part(record: dict[str, Any], part: str) -> list[dict[str, Any]]:
    rows = record["diagnostics"]["parameters"]
    return [row for row in rows if row["name"].startswith(f"{part}.")]


def assert_gets_gradients_but_never_moves(rows: list[dict[str, Any]]) -> None:
    assert rows
    for row in rows:
        assert row["in_optimizer"] is False and row["requires_grad"] is True
        assert row["grad"] == "finite" and row["grad_norm"] > 0
        assert row["update_norm"] == 0.0


def assert_trains(rows: list[dict[str, Any]]) -> None:
    assert rows
    for row in rows:
        assert row["in_optimizer"] is True and row["grad"] == "finite"
        assert row["update_norm"] > 0


@pytest.mark.parametrize("seed", SEEDS)
def test_with_every_parameter_in_the_optimizer_everything_moves(seed: int) -> None:
    record = run("none", seed)
    sig = record["signature"]
    assert record["status"] == "ok"
    assert (sig["in_optimizer"], sig["not_in_optimizer"]) == (6, 0)
    assert sig["grad_but_no_update"] == 0 and sig["stale_optimizer_tensors"] == 0
    assert_trains(record["diagnostics"]["parameters"])
    assert sig["final_loss"] < 0.01
    assert record["observed"] == "all-optimized"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_head_left_out_gets_gradients_and_never_moves(seed: int) -> None:
    record = run("head", seed)
    sig = record["signature"]
    assert (sig["head_grad_but_no_update"], sig["backbone_grad_but_no_update"]) == (2, 0)
    assert sig["head_update_norm"] == 0.0
    assert_gets_gradients_but_never_moves(rows_by_part(record, "head"))
    assert_trains(rows_by_part(record, "backbone"))
    # The loss hides it: the backbone learns around the frozen random head and still fits the
    # batch, working harder (moving further) than when the head helps.
    assert sig["final_loss"] < 0.05
    intact = run("none", seed)["signature"]
    assert sig["backbone_update_norm"] > 1.2 * intact["backbone_update_norm"]
    assert record["observed"] == "head-left-out"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_backbone_left_out_leaves_the_head_on_random_features(seed: int) -> None:
    record = run("backbone", seed)
    sig = record["signature"]
    assert (sig["backbone_grad_but_no_update"], sig["head_grad_but_no_update"]) == (4, 0)
    assert sig["backbone_update_norm"] == 0.0
    assert_gets_gradients_but_never_moves(rows_by_part(record, "backbone"))
    assert_trains(rows_by_part(record, "head"))
    assert 0.5 < sig["final_loss"] < 0.7 * sig["initial_loss"]
    assert record["observed"] == "backbone-left-out"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_head_replaced_after_the_optimizer_is_not_in_it(seed: int) -> None:
    record = run("head-replaced-after", seed)
    sig = record["signature"]
    assert sig["stale_optimizer_tensors"] == 2  # the old head's weight and bias
    assert sig["not_in_optimizer"] == 2 and sig["head_grad_but_no_update"] == 2
    assert_gets_gradients_but_never_moves(rows_by_part(record, "head"))
    assert_trains(rows_by_part(record, "backbone"))
    assert sig["final_loss"] < 0.05
    assert record["observed"] == "stale-optimizer"


def test_the_optimizer_table_shows_the_stale_tensors() -> None:
    (held,) = run("head-replaced-after")["diagnostics"]["tables"]
    assert held["key"] == "optimizer"
    by_parameter = {row[2]: row for row in held["rows"]}
    assert [row[2] for row in held["rows"]].count("(not in the model)") == 2
    stale = [row for row in held["rows"] if row[2] == "(not in the model)"]
    assert [row[1] for row in stale] == ["4x32", "4"] and not any(row[3] for row in stale)
    assert by_parameter["backbone.0.weight"][3] is True
    (clean,) = run("none")["diagnostics"]["tables"]
    assert [row[2] for row in clean["rows"]][-2:] == ["head.weight", "head.bias"]


@pytest.mark.parametrize("exclude", EXCLUSIONS)
def test_every_run_reports_the_same_keys_and_plain_json(exclude: str) -> None:
    record = run(exclude)
    assert set(record["signature"]) == set(run("none")["signature"])
    assert set(record["metrics"]) == {"loss", "update@backbone", "update@head"}
    json.dumps(record, allow_nan=False)


def test_the_frozen_part_never_moves_at_any_step() -> None:
    for exclude, frozen in (("head", "head"), ("backbone", "backbone")):
        points = run(exclude)["metrics"][f"update@{frozen}"]
        assert len(points) == 200 and all(value == 0.0 for _, value in points)


def test_every_exclusion_sees_the_same_batch() -> None:
    assert len({run(exclude)["inputs"]["sha256"] for exclude in EXCLUSIONS}) == 1


def test_grad_without_update_and_stale_tensors_on_a_hand_made_model() -> None:
    torch.manual_seed(0)
    first = nn.Linear(2, 3)
    model = nn.Sequential(first, nn.Linear(3, 1))
    optimizer = torch.optim.SGD(first.parameters(), lr=0.1)
    old = first.weight
    first.weight = nn.Parameter(old.detach().clone())  # swapped after the optimizer
    assert [tuple(t.shape) for t in stale_tensors(model, optimizer)] == [(3, 2)]
    row = {"grad": "finite", "grad_norm": 0.3, "update_norm": 0.0}
    assert has_grad_but_no_update(row)
    assert not has_grad_but_no_update(row | {"update_norm": 0.1})
    assert not has_grad_but_no_update({"grad": "none", "grad_norm": None, "update_norm": 0.0})
    assert not has_grad_but_no_update({"grad": "zero", "grad_norm": 0.0, "update_norm": 0.0})


def test_bad_exclusion_is_rejected_by_name() -> None:
    with pytest.raises(KnobError) as caught:
        resolve_knobs(drill, {"exclude": "everything"})
    assert caught.value.knob == "exclude"


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"grad_but_no_update": 0, "stale_optimizer_tensors": 0}, "all-optimized"),
        ({"head_grad_but_no_update": 2, "backbone_grad_but_no_update": 0}, "head-left-out"),
        ({"head_grad_but_no_update": 0, "backbone_grad_but_no_update": 4}, "backbone-left-out"),
        ({"head_grad_but_no_update": 2, "stale_optimizer_tensors": 2}, "stale-optimizer"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected


def test_each_outcome_is_a_listed_hypothesis() -> None:
    keys = {hypothesis.key for hypothesis in drill.hypotheses}
    assert {run(exclude)["observed"] for exclude in EXCLUSIONS} == keys
    assert run("none")["observed"] == drill.healthy  # the fixed side of a failed/fixed pair


EXPECTED = {
    "none": "all-optimized",
    "head": "head-left-out",
    "backbone": "backbone-left-out",
    "head-replaced-after": "stale-optimizer",
}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("exclude", EXCLUSIONS)
def test_the_verdict_holds_across_seeds(exclude: str, seed: int) -> None:
    assert run(exclude, seed)["observed"] == EXPECTED[exclude]


def test_every_hypothesis_is_the_verdict_of_some_exclusion() -> None:
    assert set(EXPECTED) == set(EXCLUSIONS)
    assert set(EXPECTED.values()) == {hypothesis.key for hypothesis in drill.hypotheses}


@pytest.mark.parametrize("seed", SEEDS)
def test_a_backbone_left_out_has_the_loss_curve_of_a_detached_backbone(seed: int) -> None:
    # The scenario says the curves are bit-identical and that only the audit tells them apart.
    detached = run_drill("break-the-graph", {"cut": "detach-hidden"}, seed)
    assert run("backbone", seed)["metrics"]["loss"] == detached["metrics"]["loss"]
    assert "bit-identical" in drill.scenario and "audit" in drill.scenario
