"""A new instructor's term in Chromium against the real server (issue 30, instructor tooling):
they set their cohort an assignment, the learner finds it from the navigation and does part of
it, the instructor follows the cohort on its summary and downloads the gradebook. At 390 px the
new pages fit the screen."""

import csv
import os
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.browser.conftest import ADMIN, log_in, register
from tests.browser.test_layout import axe_problems
from tests.browser.test_round_flow import fill_diagnosis, open_round

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAPTOP: ViewportSize = {"width": 1366, "height": 768}
PHONE: ViewportSize = {"width": 390, "height": 844}
SHOTS = os.environ.get("DRILLBOOK_SCREENSHOTS")  # a directory: keep screenshots for a look
# Ten days ahead, at 17:00 UTC: the assignment stays "due", never "overdue", in this test.
DUE = (datetime.now(UTC) + timedelta(days=10)).replace(hour=17, minute=0, second=0, microsecond=0)


# What each screenshot is cropped to (kept small).
CROPS = {
    "assignment-form": "#new-assignment + form",
    "assignments-learner": "main",
    "cohort-summary": "#summary",
    "assignment-board": "section.assignment",
}


def shot(page: Page, name: str) -> None:
    if SHOTS:
        width = page.viewport_size["width"]  # type: ignore[index]
        page.locator(CROPS[name]).first.screenshot(path=f"{SHOTS}/{name}-{width}.png")


def check_layout(page: Page, viewport: ViewportSize, name: str) -> None:
    """At this size the page does not scroll sideways and axe-core finds no serious or critical
    problem; then its feature is photographed (when asked for)."""
    page.set_viewport_size(viewport)
    width: int = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"], f"{page.url} is {width} px wide at {viewport['width']} px"
    assert axe_problems(page) == [], page.url
    shot(page, name)


@pytest.fixture
def people(browser: Browser, live_server: str) -> Iterator[tuple[Page, Page]]:
    """A brand-new instructor (promoted by the admin) with a cohort, and a learner in it."""
    base = live_server
    contexts = [browser.new_context(viewport=LAPTOP) for _ in range(3)]
    try:
        instructor, admin, learner = (context.new_page() for context in contexts)
        register(instructor, base, "term-instructor")
        log_in(admin, base, ADMIN)
        admin.goto(f"{base}/admin/users")
        admin.get_by_label("role of term-instructor").select_option("instructor")
        admin.locator("tr", has_text="term-instructor").get_by_role("button", name="Save").click()
        expect(admin.get_by_label("role of term-instructor")).to_have_value("instructor")
        instructor.goto(f"{base}/cohorts")
        instructor.fill("#cohort-name", "Term cohort")
        instructor.get_by_role("button", name="Create cohort").click()
        code = instructor.locator("#join-code").inner_text()
        register(learner, base, "term-learner")
        learner.fill("#join-code", code)
        learner.get_by_role("button", name="Join").click()
        expect(learner.get_by_text("You joined the cohort.")).to_be_visible()
        yield instructor, learner
    finally:
        for context in contexts:
            context.close()


def test_a_new_instructor_sets_follows_and_grades_an_assignment(
    people: tuple[Page, Page], live_server: str, tmp_path: Path
) -> None:
    instructor, learner = people
    cohort_url = instructor.url
    instructor.reload()
    summary = instructor.locator("#summary")
    expect(summary).to_contain_text("No assignments yet")

    # Set it: one curve round and a case, due on a date in UTC.
    instructor.locator("#assignments-link").click()
    instructor.fill("#assignment-title", "Week 1: read the curves")
    instructor.fill("#assignment-due", f"{DUE:%Y-%m-%dT%H:%M}")
    instructor.fill("#assignment-rounds", "1")
    instructor.locator("summary", has_text="Cases").click()
    case_box = instructor.locator("input[name^='case:']").first
    case_title = case_box.locator("xpath=..").inner_text().strip()
    case_box.check()
    for viewport in (PHONE, LAPTOP):
        check_layout(instructor, viewport, "assignment-form")
    instructor.get_by_role("button", name="Set the assignment").click()
    assignment = instructor.locator("section.assignment")
    expect(assignment).to_contain_text("Week 1: read the curves")
    expect(assignment).to_contain_text(f"{DUE:%a %d %b %Y}, 17:00 UTC")
    expect(assignment).to_contain_text(re.compile(r"Due in (9|10) days"))  # and some hours
    expect(assignment.locator("tr[data-username=term-learner] td").first).to_have_text("open")

    # The learner finds it from the navigation, with both items not done yet, and does one.
    learner.get_by_role("navigation", name="Main").get_by_role("link", name="Assignments").click()
    mine = learner.locator("section.assignment")
    expect(mine).to_contain_text("Week 1: read the curves")
    expect(mine).to_contain_text(case_title)
    expect(mine.locator(".item-state")).to_have_text(["not yet", "not yet"])
    for viewport in (PHONE, LAPTOP):
        check_layout(learner, viewport, "assignments-learner")
    learner.get_by_role("link", name="Answer 1 curve round").click()
    learner.locator("#start-round").click()
    open_round(learner)
    fill_diagnosis(learner)
    learner.locator("#answer-round").click()
    expect(learner.locator("#round-verdict")).to_be_visible()
    learner.goto(f"{live_server}/assignments")
    expect(mine.locator("[data-item='rounds:1'] .item-state")).to_have_text("done")
    expect(mine.locator(".item-state")).to_have_text(["not yet", "done"])

    # The instructor follows the cohort: still due (one item left), active a moment ago.
    instructor.goto(cohort_url)
    row = instructor.locator("#cohort-summary tr[data-username=term-learner]")
    expect(row.locator("[data-count=done]")).to_have_text("0")
    expect(row.locator("[data-count=due]")).to_have_text("1")
    expect(row.locator("[data-count=overdue]")).to_have_text("0")
    expect(row.locator("time")).to_contain_text("ago")
    for viewport in (PHONE, LAPTOP):
        check_layout(instructor, viewport, "cohort-summary")
    instructor.locator("#assignments-link").click()
    expect(instructor.locator("tr[data-username=term-learner] td.num")).to_have_text("1 of 2")
    for viewport in (PHONE, LAPTOP):
        check_layout(instructor, viewport, "assignment-board")

    # And downloads the gradebook: the round's points and the assignment's standing.
    instructor.goto(cohort_url)
    with instructor.expect_download() as download:
        instructor.locator("#gradebook-csv").click()
    saved = tmp_path / "gradebook.csv"
    download.value.save_as(saved)
    assert download.value.suggested_filename.endswith("-gradebook.csv")
    with saved.open(newline="") as handle:
        [row_of_learner] = list(csv.DictReader(handle))
    assert row_of_learner["username"] == "term-learner"
    assert row_of_learner["round 1: points of 2"] in ("0", "1", "2")
    column = f"assignment: Week 1: read the curves (due {DUE:%Y-%m-%d} 17:00 UTC)"
    assert row_of_learner[column] == "not due yet"
