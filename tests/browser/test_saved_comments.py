"""An instructor's saved comments in a real browser: kept on their list page, then used in a
review, where choosing one appends it to the overall comment at once (static/app.js) and leaves
the select empty, so the server does not append it a second time."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ADMIN, log_in, register
from tests.browser.test_review_flow import explain, run_drill

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SAVED = "Show the run that proves the fix: the same seed, the bug knob off."


def test_a_saved_comment_goes_into_the_review_once(new_page: type[Page], live_server: str) -> None:
    base = live_server
    instructor, admin, learner = new_page(), new_page(), new_page()  # type: ignore[call-arg]
    register(instructor, base, "sam-instructor")
    log_in(admin, base, ADMIN)
    admin.goto(f"{base}/admin/users")
    admin.get_by_label("role of sam-instructor").select_option("instructor")
    admin.locator("tr", has_text="sam-instructor").get_by_role("button", name="Save").click()
    expect(admin.get_by_label("role of sam-instructor")).to_have_value("instructor")
    instructor.goto(f"{base}/cohorts")
    instructor.fill("#cohort-name", "Saved-comments cohort")
    instructor.get_by_role("button", name="Create cohort").click()
    code = instructor.locator("#join-code").inner_text()
    register(learner, base, "kim-learner")
    learner.fill("#join-code", code)
    learner.get_by_role("button", name="Join").click()
    expect(learner.get_by_text("You joined the cohort.")).to_be_visible()
    for bug, prediction in (("shuffled-labels", "It fits anyway."), ("none", "Loss to zero.")):
        run_drill(learner, base, bug=bug, hypothesis="memorises the batch", prediction=prediction)
    learner.reload()
    explain(learner, "(v1)")
    learner.get_by_role("button", name="Submit for review").click()
    expect(learner.locator("#submission-status")).to_have_text("pending")
    submission = learner.url.removeprefix(base)

    instructor.goto(f"{base}/reviews")
    instructor.get_by_role("link", name="Your saved comments").click()
    instructor.fill("#saved-comment-new", SAVED)
    instructor.get_by_role("button", name="Save to my list").click()
    expect(instructor.locator("#saved-comments")).to_contain_text("(1 of 50)")
    # Narrow as a phone: the list page stays within the screen.
    instructor.set_viewport_size({"width": 390, "height": 844})
    assert instructor.evaluate("document.documentElement.scrollWidth") <= 390
    instructor.set_viewport_size({"width": 1366, "height": 768})

    instructor.goto(f"{base}{submission}")
    for radio in instructor.locator('.rubric input[type=radio][value="2"]').all():
        radio.check()
    instructor.fill("#review-comment", "Clear mechanism.")
    instructor.locator("#saved-comment").select_option(label=SAVED)
    expect(instructor.locator("#review-comment")).to_have_value(f"Clear mechanism.\n\n{SAVED}")
    expect(instructor.locator("#saved-comment")).to_have_value("")
    expect(instructor.locator("#review-comment")).to_be_focused()
    instructor.get_by_role("button", name="Accept").click()
    expect(instructor.locator("#submission-status")).to_have_text("accepted")

    learner.goto(f"{base}/drills/overfit-one-batch")
    feedback = learner.locator("#feedback")
    expect(feedback).to_contain_text("Clear mechanism.")
    expect(feedback).to_contain_text(re.compile(re.escape(SAVED)))
    # Once, not twice: the select went back to "None" before the form was sent.
    assert feedback.inner_text().count("the bug knob off") == 1
