"""A curve round in Chromium against the real server: the run's curves stream in under neutral
names, the answer waits for the whole run, the diagnosis is sent as htmx and the truth replaces
the form, with the learner's parts beside a model answer."""

import os
import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import register

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = os.environ.get("DRILLBOOK_SCREENSHOTS")  # a directory: keep screenshots for a look


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/{name}.png", full_page=True)


def open_round(page: Page) -> None:
    """From the rounds list (or a round's "Next round"), to a round whose run has ended."""
    expect(page).to_have_url(re.compile(r"/practice/rounds/\d+$"))
    # The button comes alive once the run has ended (the body is re-fetched on "done").
    expect(page.locator("#answer-round")).to_be_enabled(timeout=90_000)


def fill_diagnosis(page: Page) -> None:
    page.locator("input[name=leading]").first.check()
    page.locator("input[name=alternatives]").nth(1).check()
    page.select_option("#first_test", index=1)
    page.fill("#intervention", "Undo whatever the curve points at.")
    page.fill("#confirmation", "The loss falls to the drill's healthy floor.")


def test_a_round_from_its_curves_to_the_model_answer(page: Page, live_server: str) -> None:
    register(page, live_server, "rory-rounds")
    page.goto(f"{live_server}/practice")
    page.locator("#rounds-link").click()
    page.locator("#start-round").click()
    open_round(page)
    expect(page.locator("#round-run .chart .js-plotly-plot").first).to_be_visible()
    shot(page, "round-before")

    # Everything at once: each missing part is named beside its field, focus on the first.
    page.locator("#answer-round").click()
    expect(page.locator("#error-leading")).to_be_visible()
    expect(page.locator("#error-confirmation")).to_be_visible()
    expect(page.locator("input[name=leading]").first).to_be_focused()
    fill_diagnosis(page)
    page.locator("#answer-round").click()

    expect(page.locator("#round-verdict")).to_be_visible()
    expect(page.locator("#round-parts tbody tr")).to_have_count(5)
    expect(page.locator("#round-reveal")).to_contain_text("Every knob")
    expect(page.locator("#round-run .command code")).to_contain_text("python -m drills run")
    expect(page.locator("#announcer")).to_contain_text("Score:")
    shot(page, "round-after")

    page.locator("#next-round").click()
    expect(page).to_have_url(re.compile(r"/practice/rounds/\d+$"))
    page.goto(f"{live_server}/practice/rounds")
    expect(page.locator("#round-list tbody tr")).to_have_count(2)
    shot(page, "round-list")
