"""A learner's day of spaced review in Chromium against the real server: a missed prediction
joins the day's list first, each item is answered from memory before the model answer shows,
and rating it moves on to the next until nothing is due."""

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


def test_a_day_of_review_starts_with_the_learners_own_miss(page: Page, live_server: str) -> None:
    register(page, live_server, "rhea-reviewer")
    page.goto(f"{live_server}/drills/overfit-one-batch")
    page.get_by_label(re.compile("memorises the batch")).check()
    page.fill("#prediction", "It fits anyway.")
    page.select_option("#knob-bug", "shuffled-labels")
    page.locator("#run-button").click()
    expect(page.locator("#verdict")).to_contain_text("did not match", timeout=60_000)

    page.get_by_role("link", name="Practice").click()
    items = page.locator("#due-now li")
    expect(items).to_have_count(6)  # the miss, then the day's five new track items
    expect(items.first).to_contain_text("your miss")
    shot(page, "practice-due")
    page.locator("#start-review").click()

    reviewed = 0
    while True:
        expect(page.locator("#practice-prompt")).to_be_visible()
        if reviewed == 0:
            expect(page.locator("#practice-prompt")).to_contain_text("you predicted")
            # The answer comes first: an empty one is refused beside its field.
            page.get_by_role("button", name="Show the model answer").click()
            expect(page.locator("#practice-answer")).to_have_attribute("aria-invalid", "true")
            expect(page.locator("#practice-answer")).to_be_focused()
        page.fill("#practice-answer", f"My answer from memory, number {reviewed + 1}.")
        page.get_by_role("button", name="Show the model answer").click()
        expect(page.locator("#practice-model")).to_be_visible()
        expect(page.locator("#practice-yours")).to_contain_text(f"number {reviewed + 1}")
        if reviewed == 0:
            expect(page.locator("#practice-evidence a")).to_have_attribute(
                "href", re.compile(r"^/attempts/\d+$")
            )
            expect(page.locator("#practice-retry a")).to_have_attribute(
                "href", re.compile(r"seed=\d+")
            )
            shot(page, "practice-miss-answered")
        if reviewed == 1:
            shot(page, "practice-track-answered")
        page.get_by_role("button", name=re.compile("^Good")).click()
        reviewed += 1
        if "/practice?done=1&rated=" in page.url:
            break
        assert reviewed < 10, "the day's list never ended"

    assert reviewed == 6
    expect(page.locator("#practice-done")).to_be_visible()
    # The last one rated good: the list says when it is back.
    expect(page.locator("#coming-back")).to_contain_text(re.compile(r"Back (tomorrow|in \d+ days)"))
    expect(page.locator("#due-now")).to_contain_text("Nothing is due right now")
