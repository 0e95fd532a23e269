"""Comparing runs from the drill page (issue 30, "Run comparison that teaches"): a learner ticks
two finished runs in their list of attempts, compares them, finds both on the chart with their
knobs against their numbers, and smooths the curves while the raw ones stay behind."""

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import FINAL_PANEL, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DRILL = "overfit-one-batch"

# The loss chart's traces as plotly holds them: raw ones and the smoothed ones drawn from them.
TRACES = """() => {
  const plot = document.querySelector("#chart-loss .js-plotly-plot");
  return plot.data.map((t) => ({
    name: t.name, y: t.y, opacity: t.opacity, showlegend: t.showlegend,
    smoothed: Boolean(t.meta && t.meta.smoothed),
  }));
}"""


def run_overfit(page: Page, live_server: str, lr: str) -> str:
    """Predict and run the drill at learning rate `lr`; the finished attempt's id."""
    page.goto(f"{live_server}/drills/{DRILL}")
    page.get_by_label(re.compile("memorises the batch")).check()
    page.fill("#prediction", "The loss falls to about zero.")
    page.fill("#knob-lr", lr)
    page.fill("#knob-steps", "60")
    page.locator("#run-button").click()
    panel = page.locator(FINAL_PANEL)
    expect(panel).to_be_visible(timeout=60_000)
    attempt_id = panel.get_attribute("data-attempt")
    assert attempt_id
    return attempt_id


def traces(page: Page) -> dict[str, list[dict[str, Any]]]:
    found: list[dict[str, Any]] = page.evaluate(TRACES)
    return {
        "raw": [t for t in found if not t["smoothed"]],
        "smoothed": [t for t in found if t["smoothed"]],
    }


def test_tick_two_runs_compare_them_and_smooth_the_curves(page: Page, live_server: str) -> None:
    register(page, live_server, "comparing-learner")
    first = run_overfit(page, live_server, "0.01")
    second = run_overfit(page, live_server, "0.05")

    # The list of attempts has refreshed with the second run: both can be ticked.
    history = page.locator("#attempt-history")
    expect(history.locator('input[name="run"]')).to_have_count(2)
    history.get_by_label(f"Compare attempt {first}").check()
    history.get_by_label(f"Compare attempt {second}").check()
    history.get_by_role("button", name="Compare selected").click()
    # The first ticked run in the list (the newest) is the page; the other is drawn beside it.
    expect(page).to_have_url(re.compile(rf"/attempts/{second}\?compare={first}$"))

    loss = page.locator("#chart-loss")
    expect(loss).to_have_attribute("data-traces", "2")
    before = traces(page)
    names = sorted(t["name"] for t in before["raw"])
    assert names == sorted([f"#{first} training loss", f"#{second} training loss"]), names
    assert before["smoothed"] == []

    # The knobs against the numbers: lr differs, the rest is said once.
    table = page.locator("#compare-table")
    expect(table.locator("thead")).to_contain_text("lr")
    expect(table.locator("#same-knobs")).to_contain_text("steps=60")
    expect(table.locator("tbody tr")).to_have_count(2)

    # Smoothing, from the keyboard: off at first, then at its strongest.
    smoothing = loss.get_by_label("Smoothing")
    expect(smoothing).to_have_value("0")
    expect(smoothing).to_have_attribute("aria-valuetext", "off")
    smoothing.focus()
    page.keyboard.press("End")
    expect(loss).to_have_attribute("data-smoothing", "0.99")
    strong = traces(page)
    assert len(strong["smoothed"]) == 2
    # The raw traces stay, as they were, faint behind; the smoothed ones take their legend.
    assert [t["y"] for t in strong["raw"]] == [t["y"] for t in before["raw"]]
    assert all(t["showlegend"] is False for t in strong["raw"])
    expect(loss.locator(".legendtext")).to_have_count(2)
    for raw, smooth in zip(strong["raw"], strong["smoothed"], strict=True):
        assert smooth["name"] == raw["name"] and raw["opacity"] < smooth["opacity"]
        assert smooth["y"] != raw["y"] and len(smooth["y"]) == len(raw["y"])

    # Less smoothing redraws the smoothed traces, and only them.
    page.keyboard.press("PageDown")
    lighter = loss.get_attribute("data-smoothing")
    assert lighter is not None and 0 < float(lighter) < 0.99, lighter
    weaker = traces(page)
    assert [t["y"] for t in weaker["raw"]] == [t["y"] for t in before["raw"]]
    assert [t["y"] for t in weaker["smoothed"]] != [t["y"] for t in strong["smoothed"]]

    # Back to off: the raw traces alone, as drawn at first.
    page.keyboard.press("Home")
    expect(smoothing).to_have_attribute("aria-valuetext", "off")
    off = traces(page)
    assert off["smoothed"] == []
    assert [t["opacity"] for t in off["raw"]] == [t["opacity"] for t in before["raw"]]
