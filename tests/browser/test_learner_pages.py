"""What a learner sees stays true as runs move on, in Chromium against the real server: a
visitor reads a drill and comes back to it after registering; after Run the live chart is in
view; a reload during the run keeps the live panel; the submit section unlocks when a run ends,
without a reload."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.slow]
DRILL = "/drills/overfit-one-batch"


def in_view(page: Page, selector: str) -> bool:
    """Some of the element lies inside the visible area of the window."""
    return bool(
        page.evaluate(
            """(selector) => {
                const box = document.querySelector(selector).getBoundingClientRect();
                return box.bottom > 0 && box.top < window.innerHeight;
            }""",
            selector,
        )
    )


def run(page: Page, *, bug: str, steps: str) -> None:
    page.get_by_label(re.compile("memorises the batch")).check()
    page.fill("#prediction", "The loss falls to about zero.")
    page.select_option("#knob-bug", bug)
    page.fill("#knob-steps", steps)
    page.locator("#run-button").click()


def test_a_visitor_registers_from_a_drill_runs_it_and_the_page_keeps_up(
    page: Page, live_server: str
) -> None:
    page.set_viewport_size({"width": 1366, "height": 768})
    page.goto(live_server + DRILL)
    expect(page.get_by_role("heading", name="Overfit a single batch")).to_be_visible()
    expect(page.get_by_label(re.compile("memorises the batch"))).to_be_visible()
    expect(page.locator("#run-button")).to_have_count(0)
    page.locator("#visitor-run").get_by_role("link", name="Create an account").click()
    page.fill("#username", "vera-visitor")
    page.fill("#display_name", "Vera")
    page.fill("#password", PASSWORD)
    page.fill("#password_again", PASSWORD)
    page.get_by_role("button", name="Create account").click()
    expect(page).to_have_url(live_server + DRILL)

    submit = page.locator("#submit-evidence")
    expect(submit).to_contain_text("you need at least one run that shows the failure")

    # The Run button sits low in the left column: the new run's chart must come into view.
    run(page, bug="shuffled-labels", steps="2000")
    expect(page.locator("#run-panel.live")).to_be_visible()
    assert in_view(page, "#chart-loss")

    # A reload during the run keeps the live panel, and the chart goes on growing.
    attempt = page.locator("#run-panel").get_attribute("data-attempt")
    page.reload()
    expect(page.locator(f'#run-panel[data-attempt="{attempt}"]')).to_be_visible()
    page.wait_for_function(
        "() => Number(document.querySelector('#chart-loss')?.dataset.points || 0) > 0"
    )
    expect(page.locator("#verdict")).to_be_visible(timeout=60_000)
    expect(submit).to_contain_text("you need at least one run that shows the failure")

    # A fixed run ends: the submit form appears without a reload.
    run(page, bug="none", steps="200")
    expect(page.locator("#verdict")).to_contain_text("matched", timeout=60_000)
    expect(page.locator("#submit-mechanism")).to_be_visible()
    expect(page.locator("#failed-attempt option")).to_have_count(1)
    expect(page.locator("#fixed-attempt option")).to_have_count(1)

    # Typed text survives a later run; the pickers gain the new run and keep the choice.
    page.fill("#submit-mechanism", "Labels moved between examples.")
    chosen = page.locator("#failed-attempt").input_value()
    run(page, bug="shuffled-labels", steps="200")
    expect(page.locator("#failed-attempt option")).to_have_count(2, timeout=60_000)
    expect(page.locator("#submit-mechanism")).to_have_value("Labels moved between examples.")
    expect(page.locator("#failed-attempt")).to_have_value(chosen)

    page.goto(live_server + "/")
    expect(page.locator('[data-standing="overfit-one-batch"]')).to_contain_text("3 runs")
