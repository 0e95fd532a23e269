"""Revise and resubmit in Chromium against the real server (issue 30, point 4): an instructor
asks for changes on a revealed case, the learner reads the comment and sends a revised diagnosis
(on a phone-width screen too), the instructor finds it in the queue, reviews it beside the
diagnosis as first sent, and accepts; the loop ends there."""

import os
import re

import pytest
from playwright.sync_api import FloatRect, Page, expect

from tests.browser.conftest import ADMIN, case_runs_settled, log_in, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = os.environ.get("DRILLBOOK_SCREENSHOTS")  # a directory: keep screenshots for a look
CASE = "A fresh head on a feature extractor"


def shot(page: Page, name: str, *, until: str = "") -> None:
    """The review card and the revisions below it, cropped to them (kept small for docs/):
    down to the end of the revisions, or to the top of `until`."""
    if not SHOTS:
        return
    top = page.locator("#case-review").bounding_box()
    bottom = page.locator(until or "#revisions").bounding_box()
    assert top is not None and bottom is not None
    width = page.viewport_size["width"] if page.viewport_size else 1366
    end = bottom["y"] if until else bottom["y"] + bottom["height"]
    height = end - top["y"] + 16
    # A box is measured from the viewport's top; a full-page clip from the page's top.
    scrolled = float(page.evaluate("window.scrollY"))
    y = max(top["y"] + scrolled - 8, 0)
    clip: FloatRect = {"x": 0, "y": y, "width": width, "height": height}
    page.screenshot(path=f"{SHOTS}/{name}.png", clip=clip, full_page=True)


# The elements that reach past the screen's right edge, innermost first (to name in a failure).
WIDE = """() => [...document.querySelectorAll('body *')]
  .filter(e => e.getBoundingClientRect().right > window.innerWidth + 1)
  .filter(e => ![...e.children].some(c => c.getBoundingClientRect().right > window.innerWidth + 1))
  .slice(0, 5).map(e => e.tagName + '#' + e.id + '.' + e.className + ' ' +
    Math.round(e.getBoundingClientRect().right))"""


def fits_the_screen(page: Page) -> None:
    """Nothing wider than the screen, once the charts have redrawn for its width (they resize
    on the window's resize event, a moment after the viewport changes)."""
    fits = "document.documentElement.scrollWidth <= window.innerWidth"
    for _ in range(50):  # up to 5 s; wait_for_function needs an eval the page's CSP forbids
        if page.evaluate(fits):
            break
        page.wait_for_timeout(100)
    width = page.evaluate("document.documentElement.scrollWidth")
    viewport = page.evaluate("window.innerWidth")
    assert width <= viewport, f"{width} px wide on a {viewport} px screen: {page.evaluate(WIDE)}"


def solve_case(page: Page, base: str) -> str:
    """Open the case, diagnose, name a cause and fix, and wait for the reveal; its URL."""
    page.goto(f"{base}/cases")
    card = page.locator(".case-card", has=page.get_by_role("heading", name=CASE))
    card.get_by_role("button", name=re.compile("Start this case|Continue")).click()
    expect(page.locator('[data-kind="symptom"] .status')).to_have_text("finished", timeout=60_000)
    case_runs_settled(page)
    form = page.locator("#diagnosis form")
    form.locator("fieldset").nth(0).get_by_label(re.compile("without the backbone")).check()
    page.select_option("#first_test", label="How far each part moves")
    page.fill("#intervention", "Fix the optimizer.")
    page.fill("#confirmation", "It works.")
    page.get_by_role("button", name="Record the diagnosis").click()
    verdict = page.locator("#verdict form")
    verdict.locator("fieldset").nth(0).get_by_label(re.compile("without the backbone")).check()
    verdict.locator("fieldset").nth(1).get_by_label(re.compile("model.parameters")).check()
    page.get_by_role("button", name="Run the fix and reveal").click()
    expect(page.locator("#reveal")).to_be_visible(timeout=60_000)
    return page.url


def score_all(page: Page, score: str) -> None:
    for radio in page.locator(f'.rubric input[type=radio][value="{score}"]').all():
        radio.check()


def test_changes_requested_then_a_revision_then_accepted(
    new_page: type[Page], live_server: str
) -> None:
    base = live_server
    instructor, admin, learner = new_page(), new_page(), new_page()  # type: ignore[call-arg]
    register(instructor, base, "rita-reviewer")
    log_in(admin, base, ADMIN)
    admin.goto(f"{base}/admin/users")
    admin.get_by_label("role of rita-reviewer").select_option("instructor")
    admin.locator("tr", has_text="rita-reviewer").get_by_role("button", name="Save").click()
    expect(admin.get_by_label("role of rita-reviewer")).to_have_value("instructor")
    instructor.goto(f"{base}/cohorts")
    instructor.fill("#cohort-name", "Revision cohort")
    instructor.get_by_role("button", name="Create cohort").click()
    code = instructor.locator("#join-code").inner_text()
    register(learner, base, "rae-reviser")
    learner.fill("#join-code", code)
    learner.get_by_role("button", name="Join").click()
    expect(learner.get_by_text("You joined the cohort.")).to_be_visible()

    case_url = solve_case(learner, base)
    expect(learner.locator("#revisions")).to_have_count(0)  # nothing to revise yet

    # The instructor asks for changes from the queue.
    instructor.goto(f"{base}/reviews")
    instructor.locator("#case-queue").get_by_role("link", name="Review").first.click()
    score_all(instructor, "0")
    instructor.fill("#review-comment", "Name an **alternative** and the number that confirms.")
    instructor.get_by_role("button", name="Request changes").click()
    expect(instructor.locator("#case-review")).to_contain_text("changes requested")

    # The learner reads the comment and revises: the leading hypothesis stays as first sent.
    learner.goto(case_url)
    expect(learner.locator("#case-review strong", has_text="alternative")).to_be_visible()
    revise = learner.locator("#revise")
    expect(revise).to_contain_text("Leading hypothesis:")
    expect(revise.locator("input[name=leading]")).to_have_count(0)
    expect(learner.locator("#intervention")).to_have_value("Fix the optimizer.")
    revise.locator("fieldset").nth(0).get_by_label(re.compile("without the head")).check()
    learner.fill("#intervention", "Build the optimizer from model.parameters().")
    learner.fill("#confirmation", "The backbone's update-to-weight ratio rises from 0 to ~1e-3.")
    learner.fill("#revision-note", "I named the head as the rival and a number to check.")
    learner.set_viewport_size({"width": 1366, "height": 900})
    shot(learner, "4-revise-1366")
    learner.set_viewport_size({"width": 390, "height": 844})
    fits_the_screen(learner)
    shot(learner, "4-revise-390")
    learner.set_viewport_size({"width": 1280, "height": 900})
    learner.get_by_role("button", name="Send revision 1 for review").click()
    expect(learner.locator("#revision-1")).to_contain_text("Waiting for the instructor's review")
    expect(learner.locator("#revise")).to_have_count(0)

    # The instructor finds it in the queue and reviews it beside the first diagnosis.
    instructor.goto(f"{base}/reviews")
    instructor.locator("#revision-queue").get_by_role("link", name="Review").click()
    expect(instructor.locator("#revision-review")).to_contain_text("Review revision 1")
    instructor.locator(".first-diagnosis summary").click()
    expect(instructor.locator(".first-diagnosis")).to_contain_text("It works.")
    expect(instructor.locator("#revision-1")).to_contain_text("rises from 0 to ~1e-3")
    score_all(instructor, "2")
    instructor.set_viewport_size({"width": 1366, "height": 900})
    shot(instructor, "4-revise-review-1366", until="#criterion-verification")
    instructor.get_by_role("button", name="Accept").click()
    expect(instructor.locator("#next-in-queue")).to_contain_text("Nothing else waits")

    # Accepted: the loop ends; both diagnoses stay readable.
    learner.goto(case_url)
    expect(learner.locator("#revision-1")).to_contain_text("Review of revision 1: accepted")
    expect(learner.locator("#revise")).to_have_count(0)
    learner.set_viewport_size({"width": 390, "height": 844})
    fits_the_screen(learner)
    shot(learner, "4-revise-accepted-390")
