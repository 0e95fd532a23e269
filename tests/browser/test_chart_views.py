"""What the charts draw (issue 30, point 7), read from the plotly figures on the page: a
diverging learning rate leaves the chart instead of flattening the others, overfit's loss has
its chance line at ln 4, log axes label decades rather than minor ticks, the x axis says
whether it counts steps or epochs, zoom, reset and a log axis are buttons, a one-point series
is marked and explained, and a heat map keeps its width."""

import math
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import FINAL_PANEL, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIGURE = """(selector) => {
  const plot = document.querySelector(selector + " .js-plotly-plot");
  const full = plot._fullLayout;
  return {
    yrange: full.yaxis.range, ytype: full.yaxis.type, xtitle: full.xaxis.title.text,
    yticks: Array.from(plot.querySelectorAll(".ytick text")).map((t) => t.textContent),
    shapes: (plot.layout.shapes || []).map((s) => s.y0),
    annotations: (plot.layout.annotations || []).map((a) => a.text),
    traces: plot.data.map((t) => ({ name: t.name, mode: t.mode, n: t.y.length })),
    plotWidth: full._size.w, width: full.width,
  };
}"""


DRAWN = """(selector) => {
  const plot = document.querySelector(selector + " .js-plotly-plot");
  return plot !== null && plot._fullLayout !== undefined;
}"""


def figure(page: Page, selector: str) -> dict[str, Any]:
    # The final panel is swapped in before plotly draws into it: wait for the drawing.
    page.wait_for_function(DRAWN, arg=selector, timeout=15_000)
    result: dict[str, Any] = page.evaluate(FIGURE, selector)
    return result


def run_drill(page: Page, live_server: str, slug: str, knobs: dict[str, str]) -> None:
    page.goto(f"{live_server}/drills/{slug}")
    page.locator('input[name="hypothesis"]').first.check()
    page.fill("#prediction", "We will see.")
    for name, value in knobs.items():
        field = page.locator(f"#knob-{name}")
        if field.evaluate("(el) => el.tagName") == "SELECT":
            field.select_option(value)
        else:
            field.fill(value)
    page.locator("#run-button").click()
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=60_000)


MINOR_DIGIT = re.compile(r"^[2-9]$")


def test_charts_show_what_matters(page: Page, live_server: str) -> None:
    register(page, live_server, "chart-reader")

    # The lr sweep: lr=1 overflows; the axis keeps the other rates apart and says so.
    run_drill(page, live_server, "lr-sweep", {})
    loss = figure(page, "#chart-loss")
    assert loss["ytype"] == "log" and loss["xtitle"] == "step"
    assert loss["yrange"][1] < 3, loss["yrange"]  # not up to 1e+36 (36 in log10 units)
    assert any("lr=1.0 leaves the chart" in text for text in loss["annotations"]), loss
    expect(page.locator("#chart-loss .chart-clip-note")).to_contain_text("rises past the top")
    assert not any(MINOR_DIGIT.match(label) for label in loss["yticks"]), loss["yticks"]
    # "Show all" draws the whole range, "Reset view" the clipped one again.
    show_all = page.locator("#chart-loss").get_by_role("button", name="Show all")
    show_all.focus()
    page.keyboard.press("Enter")
    expect(show_all).to_have_attribute("aria-pressed", "true")
    assert figure(page, "#chart-loss")["yrange"][1] > 30
    page.locator("#chart-loss").get_by_role("button", name="Reset view").click()
    assert figure(page, "#chart-loss")["yrange"][1] < 3
    # The log toggle and zoom, from the keyboard.
    log_button = page.locator("#chart-loss").get_by_role("button", name="Log scale")
    log_button.focus()
    page.keyboard.press("Enter")
    expect(log_button).to_have_attribute("aria-pressed", "false")
    assert figure(page, "#chart-loss")["ytype"] == "linear"
    before = page.evaluate(
        "() => document.querySelector('#chart-loss .js-plotly-plot')._fullLayout.xaxis.range"
    )
    page.locator("#chart-loss").get_by_role("button", name="Zoom in").click()
    after = page.evaluate(
        "() => document.querySelector('#chart-loss .js-plotly-plot')._fullLayout.xaxis.range"
    )
    assert after[1] - after[0] < 0.6 * (before[1] - before[0])

    # Overfit with shuffled labels: the chance line at ln 4 on the loss chart.
    run_drill(page, live_server, "overfit-one-batch", {"bug": "shuffled-labels"})
    shapes = figure(page, "#chart-loss")["shapes"]
    assert any(abs(y - math.log(4)) < 1e-6 for y in shapes), shapes

    # A loop that logs once per epoch says so under its x axis.
    run_drill(page, live_server, "val-below-train", {})
    assert figure(page, "#chart-losses")["xtitle"] == "epoch"

    # One step: every series has one point, marked, and the chart says why.
    run_drill(page, live_server, "init-check", {"steps": "1"})
    lone = figure(page, "#chart-loss")
    assert all(trace["mode"] == "lines+markers" for trace in lone["traces"]), lone
    expect(page.locator("#chart-loss .chart-lone-note")).to_contain_text("Only one point")

    # A heat map at 390 px: most of the width is the plot, the colour bar title within it.
    run_drill(page, live_server, "init-check", {})
    page.set_viewport_size({"width": 390, "height": 844})
    heat = page.locator("figure.chart:has(.heatmaplayer)").first
    heat.scroll_into_view_if_needed()
    page.wait_for_timeout(500)  # plotly's responsive resize
    box = heat.bounding_box()
    assert box is not None
    sizes = heat.evaluate(
        """(figure) => {
      const plot = figure.querySelector(".js-plotly-plot");
      const title = plot.querySelector(".cbtitle text, .colorbar .gtitle, .cbtitle");
      const t = title.getBoundingClientRect();
      const f = figure.getBoundingClientRect();
      return { w: plot._fullLayout._size.w, width: plot._fullLayout.width,
               titleRight: t.right, titleLeft: t.left, figureRight: f.right, figureLeft: f.left };
    }"""
    )
    assert sizes["w"] >= 0.5 * sizes["width"], sizes
    assert sizes["figureLeft"] <= sizes["titleLeft"] and sizes["titleRight"] <= sizes["figureRight"]
