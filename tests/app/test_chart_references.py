"""Constant reference lines of a chart (a theoretical level) are taken from the run's own
signature and drawn on the live charts (as data) and the exported SVG charts."""

from typing import Any

from app.portfolio.charts import chart_svg
from app.views import observation_rows, reference_lines

CHART: dict[str, Any] = {
    "key": "loss",
    "title": "Loss",
    "metrics": ["loss"],
    "y_label": "nats",
    "log_y": False,
    "references": [
        {"label": "next-token entropy", "signature_key": "next_token_entropy"},
        {"label": "two-step <entropy>", "signature_key": "two_step_entropy"},
        {"label": "not measured", "signature_key": "missing"},
    ],
}
DRILL = {"charts": [CHART, {**CHART, "key": "other", "references": []}]}


def test_reference_lines_take_finite_values_from_the_runs_signature() -> None:
    signature = {"next_token_entropy": 0.693, "two_step_entropy": 1.386, "missing": None}
    assert reference_lines(DRILL, signature) == {
        "loss": [
            {"label": "next-token entropy", "value": 0.693},
            {"label": "two-step <entropy>", "value": 1.386},
        ],
        "other": [],
    }
    assert reference_lines(DRILL, {"next_token_entropy": float("nan")}) == {
        "loss": [],
        "other": [],
    }


def test_the_exported_chart_draws_each_reference_as_a_labelled_dotted_line() -> None:
    series = {"loss": [[0, 2.0], [1, 1.5], [2, 1.0]]}
    lines = [{"label": "two-step <entropy>", "value": 1.386}, {"label": "floor", "value": 0.2}]
    svg = str(chart_svg(CHART, series, lines))
    assert svg.count('class="reference"') == 2
    assert "two-step &lt;entropy&gt;" in svg and "<entropy>" not in svg
    # The y axis stretches to show a level below every point of the curve.
    assert 'y1="' in svg and "floor" in svg


OBSERVATIONS = {
    "observations": [
        {"key": "final_loss", "label": "Final loss", "reference": "label_entropy",
         "reference_for": ["labels-detached"]},
        {"key": "initial_loss", "label": "First loss", "reference": "chance_loss",
         "reference_for": []},
    ]
}  # fmt: skip
NUMBERS = {"final_loss": 1e-8, "label_entropy": 1.386, "initial_loss": 1.4, "chance_loss": 1.386}


def test_a_reference_that_belongs_to_a_hypothesis_shows_only_beside_it() -> None:
    clean = observation_rows(OBSERVATIONS, NUMBERS, hypotheses=("fits", "fits"))
    assert [row["reference"] for row in clean] == [None, 1.386]
    # The learner predicted shuffled labels: the floor they expected is shown to compare.
    predicted = observation_rows(OBSERVATIONS, NUMBERS, hypotheses=("fits", "labels-detached"))
    assert [row["reference"] for row in predicted] == [1.386, 1.386]


def test_a_number_with_two_floors_is_shown_beside_the_one_that_fits_the_run() -> None:
    from drills.core.catalogue import describe
    from drills.core.registry import get_drill

    drill = describe(get_drill("double-shift-labels"))
    numbers = {"final_loss": 1.33, "next_token_entropy": 0.693, "two_step_entropy": 1.386}
    twice = observation_rows(drill, numbers, hypotheses=("two-step", "shifted-once"))
    once = observation_rows(drill, numbers, hypotheses=("shifted-once", "shifted-once"))
    assert [row["reference"] for row in twice if row["value"] == 1.33] == [1.386]
    assert [row["reference"] for row in once if row["value"] == 1.33] == [0.693]


def test_a_heatmap_chart_exports_one_row_per_layer_and_leaves_exact_zeros_grey() -> None:
    chart = {
        "key": "grad", "title": "Gradient per layer", "metrics": ["grad@*"], "y_label": "L2 norm",
        "log_y": True, "references": [], "kind": "heatmap",
    }  # fmt: skip
    series = {
        "grad@hidden1": [[0, 0.0], [1, 0.0]],  # a dead layer: exactly zero
        "grad@<out>": [[0, 1e-3], [1, 1e-1]],
        "loss": [[0, 1.0], [1, 0.5]],
    }
    svg = str(chart_svg(chart, series))
    assert "hidden1" in svg and "&lt;out&gt;" in svg and "<out>" not in svg
    assert "loss" not in svg.split("</title>", 1)[1]  # only the chart's own series are rows
    # Two coloured cells (the non-zero layer); the dead layer's cells stay the grey background.
    assert svg.count('height="17"') == 2
