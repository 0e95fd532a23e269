import functools
import json
import math
from typing import Any

import pytest
import torch

from drills.catalog.break_the_graph import CUTS
from drills.catalog.break_the_graph.train import BreakConfig, forward
from drills.core.knobs import KnobError, resolve_knobs
from drills.core.registry import get_drill
from drills.kit.backbone_head import BackboneAndHead, make_data
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2)
SLUG = "break-the-graph"
drill = get_drill(SLUG)
CUT_BELOW_HEAD = ("detach-hidden", "numpy-roundtrip")
NOTHING_TO_BACKPROPAGATE = ("loss-from-item", "no-grad-forward")


@functools.cache
def run(cut: str = "none", seed: int = 0) -> dict[str, Any]:
    return run_drill(SLUG, {"cut": cut}, seed)


def rows_by_part(record: dict[str, Any], part: str) -> list[dict[str, Any]]:
    rows = record["diagnostics"]["parameters"]
    return [row for row in rows if row["name"].startswith(f"{part}.")]


@pytest.mark.parametrize("seed", SEEDS)
def test_an_intact_graph_trains_everything(seed: int) -> None:
    record = run("none", seed)
    sig = record["signature"]
    assert record["status"] == "ok"
    assert sig["upstream_grad_none"] == 0 and sig["upstream_updated"] == sig["upstream_params"] == 4
    assert sig["downstream_updated"] == sig["downstream_params"] == 2
    assert sig["initial_loss"] == pytest.approx(sig["chance_loss"], rel=0.1)
    assert sig["final_loss"] < 0.01
    assert record["observed"] == "intact"


@pytest.mark.parametrize("cut", CUT_BELOW_HEAD)
@pytest.mark.parametrize("seed", SEEDS)
def test_a_cut_below_the_head_freezes_the_backbone_only(cut: str, seed: int) -> None:
    record = run(cut, seed)
    sig = record["signature"]
    assert record["status"] == "ok"
    assert sig["upstream_grad_none"] == 4  # every backbone tensor: grad is None
    assert sig["upstream_updated"] == 0 and sig["upstream_update_norm"] == 0.0
    assert sig["downstream_grad_none"] == 0 and sig["downstream_updated"] == 2
    # The head still learns what it can on frozen random features: part of the way down.
    assert 0.5 < sig["final_loss"] < 0.7 * sig["initial_loss"]
    assert sig["final_loss"] > 50 * run("none", seed)["signature"]["final_loss"]
    for row in rows_by_part(record, "backbone"):
        assert (row["grad"], row["grad_norm"], row["update_norm"]) == ("none", None, 0.0)
        assert row["in_optimizer"] and row["requires_grad"]
    for row in rows_by_part(record, "head"):
        assert row["grad"] == "finite" and row["update_norm"] > 0
    assert record["observed"] == "cut-below-head"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_round_trip_through_plain_numbers_is_exactly_a_detach(seed: int) -> None:
    assert run("numpy-roundtrip", seed)["metrics"] == run("detach-hidden", seed)["metrics"]


def test_the_backbone_step_size_is_zero_at_every_step() -> None:
    metrics = run("detach-hidden")["metrics"]
    assert len(metrics["update@backbone"]) == 200
    assert all(value == 0.0 for _, value in metrics["update@backbone"])
    assert all(value > 0.0 for _, value in metrics["update@head"])


@pytest.mark.parametrize("seed", SEEDS)
def test_a_loss_rebuilt_from_item_is_caught(seed: int) -> None:
    record = run("loss-from-item", seed)
    sig = record["signature"]
    assert record["status"] == "error"
    assert record["error"].startswith("the loss has no grad_fn: it was rebuilt")
    assert "loss.item()" in record["error"]
    assert "does not have a grad_fn" in record["diagnostics"]["torch_error"]
    assert sig["loss_has_grad_fn"] is False and sig["output_has_grad_fn"] is True
    assert sig["steps_run"] == 0 and sig["final_loss"] is None
    assert sig["initial_loss"] == pytest.approx(sig["chance_loss"], rel=0.1)
    assert all(row["grad"] == "none" for row in record["diagnostics"]["parameters"])
    assert record["observed"] == "loss-rebuilt"


@pytest.mark.parametrize("seed", SEEDS)
def test_a_forward_under_no_grad_is_caught(seed: int) -> None:
    record = run("no-grad-forward", seed)
    sig = record["signature"]
    assert record["status"] == "error"
    assert record["error"].startswith("the loss has no grad_fn, and neither do the logits")
    assert "torch.no_grad()" in record["error"]
    assert sig["loss_has_grad_fn"] is False and sig["output_has_grad_fn"] is False
    assert sig["upstream_grad_none"] == 4 and sig["downstream_grad_none"] == 2
    assert sig["upstream_updated"] == sig["downstream_updated"] == 0
    assert record["observed"] == "no-graph"


def graph_rows(cut: str) -> dict[str, list[Any]]:
    (graph,) = run(cut)["diagnostics"]["tables"]
    assert graph["key"] == "graph"
    return {row[0]: row[1:] for row in graph["rows"]}


def test_the_graph_table_shows_where_the_graph_ends() -> None:
    assert graph_rows("none")["what the head receives"] == [True, "ReluBackward0"]
    assert graph_rows("detach-hidden")["backbone output (hidden)"] == [True, "ReluBackward0"]
    assert graph_rows("detach-hidden")["what the head receives"] == [False, None]
    assert graph_rows("numpy-roundtrip")["what the head receives"] == [False, None]
    assert graph_rows("loss-from-item")["logits"] == [True, "AddmmBackward0"]
    assert graph_rows("loss-from-item")["loss"] == [False, None]
    assert all(row == [False, None] for row in graph_rows("no-grad-forward").values())


@pytest.mark.parametrize("cut", CUTS)
def test_every_run_reports_the_same_keys_and_plain_json(cut: str) -> None:
    record = run(cut)
    assert set(record["signature"]) == set(run("none")["signature"])
    json.dumps(record, allow_nan=False)
    assert record["diagnostics"]["parameters"]


def test_metrics_match_the_charts() -> None:
    assert set(run("none")["metrics"]) == {"loss", "update@backbone", "update@head"}
    # A run that cannot backpropagate shows the one loss it computed, nothing more.
    assert set(run("loss-from-item")["metrics"]) == {"loss"}
    assert len(run("loss-from-item")["metrics"]["loss"]) == 1


def test_every_cut_sees_the_same_batch() -> None:
    assert len({run(cut)["inputs"]["sha256"] for cut in CUTS}) == 1
    assert run("none", 1)["inputs"]["sha256"] != run("none", 0)["inputs"]["sha256"]


def test_the_plain_number_round_trip_keeps_every_value_and_drops_the_history() -> None:
    config = BreakConfig()
    torch.manual_seed(0)
    model, data = BackboneAndHead(config), make_data(config, torch.Generator().manual_seed(0))
    cut, intact = forward(model, data, "numpy-roundtrip"), forward(model, data, "none")
    assert torch.equal(cut.head_input, intact.hidden)  # float32 -> Python float -> float32
    assert cut.head_input.grad_fn is None and intact.head_input.grad_fn is not None
    assert torch.equal(cut.logits, intact.logits)


def test_bad_cut_is_rejected_by_name() -> None:
    with pytest.raises(KnobError) as caught:
        resolve_knobs(drill, {"cut": "detach"})
    assert caught.value.knob == "cut"


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"loss_has_grad_fn": True, "upstream_updated": 4, "downstream_updated": 2}, "intact"),
        (
            {"loss_has_grad_fn": True, "upstream_updated": 0, "downstream_updated": 2},
            "cut-below-head",
        ),
        ({"loss_has_grad_fn": False, "output_has_grad_fn": True}, "loss-rebuilt"),
        ({"loss_has_grad_fn": False, "output_has_grad_fn": False}, "no-graph"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected


def test_each_outcome_is_a_listed_hypothesis() -> None:
    keys = {hypothesis.key for hypothesis in drill.hypotheses}
    assert {run(cut)["observed"] for cut in CUTS} == keys
    assert math.log(4) == pytest.approx(run("none")["signature"]["chance_loss"])
    assert run("none")["observed"] == drill.healthy  # the fixed side of a failed/fixed pair


EXPECTED = {
    "none": "intact",
    "detach-hidden": "cut-below-head",
    "numpy-roundtrip": "cut-below-head",
    "loss-from-item": "loss-rebuilt",
    "no-grad-forward": "no-graph",
}


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("cut", CUTS)
def test_the_verdict_holds_across_seeds(cut: str, seed: int) -> None:
    assert run(cut, seed)["observed"] == EXPECTED[cut]


def test_every_hypothesis_is_the_verdict_of_some_cut() -> None:
    assert set(EXPECTED) == set(CUTS)
    assert set(EXPECTED.values()) == {hypothesis.key for hypothesis in drill.hypotheses}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_twins_the_page_warns_about_are_identical(seed: int) -> None:
    # The scenario says so: detach and the round trip give the same run (same digest), and a
    # backbone left out of the optimizer gives the very same loss curve. Only the audit differs.
    detach, roundtrip = run("detach-hidden", seed), run("numpy-roundtrip", seed)
    assert detach["digest"] == roundtrip["digest"]
    left_out = run_drill("optimizer-membership", {"exclude": "backbone"}, seed)
    assert left_out["metrics"]["loss"] == detach["metrics"]["loss"]
    assert {row["grad"] for row in rows_by_part(detach, "backbone")} == {"none"}
    assert {row["grad"] for row in rows_by_part(left_out, "backbone")} == {"finite"}
    assert "bit-identical" in drill.scenario and "audit" in drill.scenario
