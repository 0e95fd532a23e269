"""Cases in headless Chromium against the real server: one learner solves a case end to end
(story, diagnosis, an experiment streamed live, verdict, fix, revealed truth) and misses
another."""

import os
import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import case_runs_settled, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SHOTS = os.environ.get("DRILLBOOK_SCREENSHOTS")  # a directory: keep screenshots for a look


def shot(page: Page, name: str) -> None:
    if SHOTS:
        page.screenshot(path=f"{SHOTS}/{name}.png", full_page=True)


def start(page: Page, base_url: str, title: str) -> None:
    page.goto(f"{base_url}/cases")
    card = page.locator(".case-card", has=page.get_by_role("heading", name=title))
    card.get_by_role("button", name=re.compile("Start this case|Continue")).click()
    expect(page.get_by_role("heading", name=title, level=1)).to_be_visible()
    expect(page.locator('[data-kind="symptom"] .status')).to_have_text("succeeded", timeout=60_000)
    case_runs_settled(page)


def diagnose(page: Page, leading: str, alternative: str, first_test: str) -> None:
    form = page.locator("#diagnosis form")
    form.locator("fieldset").nth(0).get_by_label(re.compile(leading)).check()
    form.locator("fieldset").nth(1).get_by_label(re.compile(alternative)).check()
    page.select_option("#first_test", label=first_test)
    page.fill("#intervention", "Give the optimizer every parameter of the model.")
    page.fill("#confirmation", "The loss reaches about zero and both parts move.")
    page.get_by_role("button", name="Record the diagnosis").click()
    expect(page.locator("#experiments")).to_be_visible()


def verdict(page: Page, cause: str, fix: str) -> None:
    form = page.locator("#verdict form")
    form.locator("fieldset").nth(0).get_by_label(re.compile(cause)).check()
    form.locator("fieldset").nth(1).get_by_label(re.compile(fix)).check()
    page.get_by_role("button", name="Run the fix and reveal").click()
    expect(page.locator("#reveal")).to_be_visible(timeout=60_000)


def test_solve_one_case_and_miss_another(page: Page, live_server: str) -> None:
    register(page, live_server, "case-learner")
    page.get_by_role("link", name="Cases").click()
    expect(page).to_have_url(re.compile(r"/cases$"))
    shot(page, "cases")

    start(page, live_server, "The loss that stops short of zero")
    # The symptom run's curve is drawn under the case's own name for it.
    expect(page.locator('[data-kind="symptom"] .plot')).to_be_visible()
    shot(page, "case-symptom")
    diagnose(page, "without the backbone", "without the head", "How far each part moves")
    page.get_by_role("button", name="How far each part moves").click()
    experiment = page.locator('[data-kind="experiment"]')
    expect(experiment.locator(".status")).to_have_text("succeeded", timeout=60_000)
    case_runs_settled(page)
    expect(experiment).to_contain_text("How far the backbone moved in total")
    expect(page.locator("#experiments h2")).to_contain_text("2 of 3 left")
    shot(page, "case-experiment")
    verdict(page, "without the backbone", "Build the optimizer from model.parameters")
    expect(page.locator("#case-verdict")).to_contain_text("You named the cause.")
    expect(page.locator("#case-verdict")).to_contain_text("Your fix ran healthy.")
    expect(page.locator("#reveal")).to_contain_text("Score: 4 / 4")
    expect(page.locator("#reveal .plot")).to_be_visible()  # hidden and fixed on shared axes
    expect(page.locator("#case-body")).to_contain_text("python -m drills run optimizer-membership")
    shot(page, "case-revealed")

    start(page, live_server, "A fine curve and an unchanged checkpoint")
    diagnose(page, "without the head", "Nothing is wrong", "How far each part moves")
    verdict(page, "without the head", "Build the optimizer from model.parameters")
    expect(page.locator("#case-verdict")).to_contain_text("The cause was something else.")
    expect(page.locator("#case-verdict")).to_contain_text("did not produce a healthy run")
    expect(page.locator("#reveal")).to_contain_text("replaced after the optimizer was built")

    page.goto(f"{live_server}/cases")
    expect(page.locator("#case-frozen-features .case-state")).to_have_text("solved")
    expect(page.locator("#case-swapped-head .case-state")).to_have_text("missed")
