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
    expect(page.locator('[data-kind="symptom"] .status')).to_have_text("finished", timeout=60_000)
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

    start(page, live_server, "A fresh head on a feature extractor")
    # The symptom run's curve is drawn under the case's own name for it.
    expect(page.locator('[data-kind="symptom"] .plot')).to_be_visible()
    shot(page, "case-symptom")
    diagnose(page, "without the backbone", "without the head", "How far each part moves")
    page.get_by_role("button", name="How far each part moves").click()
    experiment = page.locator('[data-kind="experiment"]')
    expect(experiment.locator(".status")).to_have_text("finished", timeout=60_000)
    case_runs_settled(page)
    expect(experiment).to_contain_text("How far the backbone moved in total")
    expect(page.locator("#experiments h2")).to_contain_text("2 of 3 left")
    shot(page, "case-experiment")
    # The cause is drawn: read it from the experiment's evidence, as a learner would (the
    # page's own JSON, which shows what the page shows).
    case_attempt_id = page.url.rsplit("/", 1)[1]
    body = page.request.get(f"{live_server}/api/cases/attempts/{case_attempt_id}").json()
    numbers = {row["label"]: row["value"] for row in body["runs"][1]["evidence"]["numbers"]}
    still = "backbone" if numbers["How far the backbone moved in total"] == 0 else "head"
    verdict(page, f"without the {still}", "Build the optimizer from model.parameters")
    expect(page.locator("#case-verdict")).to_contain_text("You named the cause.")
    expect(page.locator("#case-verdict")).to_contain_text("Your fix ran healthy.")
    # Four points when the leading hypothesis was the drawn cause, three when it was the rival.
    expect(page.locator("#reveal")).to_contain_text(re.compile(r"Score: [34] / 4"))
    expect(page.locator("#reveal .plot")).to_be_visible()  # hidden and fixed on shared axes
    expect(page.locator("#case-body")).to_contain_text("python -m drills run optimizer-membership")
    shot(page, "case-revealed")

    # A cause this case never hides: a miss whatever was drawn.
    start(page, live_server, "A fine curve and a suspicious checkpoint")
    diagnose(page, "without the backbone", "Nothing is wrong", "How far each part moves")
    verdict(page, "without the backbone", "Set requires_grad=True")
    expect(page.locator("#case-verdict")).to_contain_text("The cause was something else.")
    # The change alters nothing: the run stays as drawn, healthy only on a healthy draw.
    expect(page.locator("#case-verdict")).to_contain_text(
        re.compile("did not produce a healthy run|not the change that removes the cause")
    )

    page.goto(f"{live_server}/cases")
    expect(page.locator("#case-a-fresh-head .case-state")).to_have_text("solved")
    expect(page.locator("#case-a-suspicious-checkpoint .case-state")).to_have_text("missed")
