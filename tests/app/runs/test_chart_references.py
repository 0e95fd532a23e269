"""Constant reference lines of a chart (a theoretical level) are taken from the run's own
signature and drawn on the live charts (as data) and the exported SVG charts."""

from typing import Any

from app.portfolio.charts import chart_svg
from app.runs.views import observation_rows, prediction_expectations, reference_lines

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


def test_the_exported_x_axis_says_what_it_counts() -> None:
    series = {"loss": [[1, 2.0], [2, 1.5]]}
    assert ">step</text>" in str(chart_svg(CHART, series, []))
    by_epoch = str(chart_svg({**CHART, "x_label": "epoch"}, series, []))
    assert ">epoch</text>" in by_epoch and ">step</text>" not in by_epoch


OBSERVATIONS = {
    "observations": [
        {"key": "final_loss", "label": "Final loss", "reference": "label_entropy",
         "reference_for": ["labels-detached"]},
        {"key": "initial_loss", "label": "First loss", "reference": "chance_loss",
         "reference_for": []},
    ]
}  # fmt: skip
NUMBERS = {"final_loss": 1e-8, "label_entropy": 1.386, "initial_loss": 1.4, "chance_loss": 1.386}


def test_a_reference_that_belongs_to_a_hypothesis_shows_only_where_the_run_shows_it() -> None:
    # A clean run: the shuffled-labels entropy is not what its final loss is expected to be.
    clean = observation_rows(OBSERVATIONS, NUMBERS, verdict="fits")
    assert [row["reference"] for row in clean] == [None, 1.386]
    stalled = observation_rows(OBSERVATIONS, NUMBERS, verdict="labels-detached")
    assert [row["reference"] for row in stalled] == [1.386, 1.386]


def test_the_learners_hypothesis_gets_its_own_theory_beside_it() -> None:
    # They predicted shuffled labels and the run memorised the batch: the 1.386 stands beside
    # their hypothesis, as what it implied, not as what this run should have shown.
    implied = prediction_expectations(
        OBSERVATIONS, NUMBERS, hypothesis="labels-detached", verdict="fits"
    )
    assert implied == [{"label": "Final loss", "value": 1e-8, "expected": 1.386}]
    # Prediction and verdict agree: the table of the run already shows it.
    assert not prediction_expectations(
        OBSERVATIONS, NUMBERS, hypothesis="labels-detached", verdict="labels-detached"
    )
    assert not prediction_expectations(OBSERVATIONS, NUMBERS, hypothesis="fits", verdict=None)


def test_a_number_with_two_floors_is_shown_beside_the_one_that_fits_the_run() -> None:
    from drills.core.catalogue import describe
    from drills.core.registry import get_drill

    drill = describe(get_drill("double-shift-labels"))
    numbers = {"final_loss": 1.33, "next_token_entropy": 0.693, "two_step_entropy": 1.386}
    twice = observation_rows(drill, numbers, verdict="two-step")
    once = observation_rows(drill, numbers, verdict="shifted-once")
    assert [row["reference"] for row in twice if row["value"] == 1.33] == [1.386]
    assert [row["reference"] for row in once if row["value"] == 1.33] == [0.693]
    # Predicted a single shift, ran a double one: ln 2 is what their hypothesis implied.
    implied = prediction_expectations(drill, numbers, hypothesis="shifted-once", verdict="two-step")
    assert [(row["expected"], row["value"]) for row in implied] == [(0.693, 1.33)]


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
