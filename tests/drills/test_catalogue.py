import json

from drills.core.catalogue import describe
from drills.core.registry import all_drills, get_drill


def test_describe_is_plain_json() -> None:
    description = describe(get_drill("overfit-one-batch"))
    assert json.loads(json.dumps(description, allow_nan=False)) == description
    assert set(description) == {
        "slug", "title", "summary", "symptom", "scenario", "version", "healthy", "knobs",
        "hypotheses", "charts", "observations", "numeric_predictions",
    }  # fmt: skip
    assert description["healthy"] in {h["key"] for h in description["hypotheses"]}


def test_knobs_keep_their_schema() -> None:
    knobs = {knob["name"]: knob for knob in describe(get_drill("overfit-one-batch"))["knobs"]}
    assert knobs["examples"]["choices"] == [1, 2, 5, 8]
    assert knobs["lr"]["kind"] == "float" and knobs["lr"]["log_scale"] is True
    assert set(knobs["lr"]) == {
        "name", "kind", "default", "help", "choices", "minimum", "maximum", "log_scale",
    }  # fmt: skip


def test_charts_and_hypotheses() -> None:
    description = describe(get_drill("overfit-one-batch"))
    charts = {chart["key"]: chart for chart in description["charts"]}
    assert charts["grad_norm"] == {
        "key": "grad_norm", "title": "Gradient norm", "metrics": ["grad_norm"],
        "y_label": "L2 norm", "log_y": True, "references": [], "kind": "lines",
        "labels": {"grad_norm": "gradient norm"}, "x_label": "step",
    }  # fmt: skip
    assert {"key", "text"} == set(description["hypotheses"][0])


def test_every_drill_names_a_healthy_outcome_among_its_hypotheses() -> None:
    for drill in all_drills():
        assert drill.healthy in {hypothesis.key for hypothesis in drill.hypotheses}, drill.slug


def test_a_description_is_built_once_and_each_caller_gets_its_own_outer_dict() -> None:
    drill = get_drill("overfit-one-batch")
    first = describe(drill)
    first["added_by_a_page"] = True  # views add their own keys to the drill's dict
    again = describe(drill)
    assert "added_by_a_page" not in again
    assert again["knobs"] is first["knobs"]  # built once: the lists inside are shared
