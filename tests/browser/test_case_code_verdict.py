"""A case answered in code, in headless Chromium against the real server, its worker and the
sandbox: the learner diagnoses a case, follows its "fix it in code" link, names the cause in the
exercise's editor, submits the repaired loop, and reads the reveal: their changes beside the
reference solution's, and the judge's checks."""

import re

import pytest
from playwright.sync_api import Page, expect

from drills.cases.registry import get_case
from drills.exercises.registry import get_exercise
from drills.sandbox import available
from tests.browser.conftest import case_runs_settled, register
from tests.browser.test_case_flow import start
from tests.browser.test_exercise_flow import replace_code

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(available() is not None, reason=f"no sandbox: {available()}"),
]

CASE = get_case("a-sanity-check")
EXERCISE = get_exercise("overfit-shuffled-pairs")


def test_a_case_ends_in_code_and_the_reveal_shows_both_diffs(page: Page, live_server: str) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    register(page, live_server, "code-verdict-learner")
    start(page, live_server, CASE.title)
    form = page.locator("#diagnosis form")
    form.locator("fieldset").nth(0).get_by_label(re.compile("re-permuted")).check()
    form.locator("fieldset").nth(1).get_by_label(re.compile("Nothing is wrong")).check()
    page.select_option("#first_test", label="Look at what the loss is given")
    page.fill("#intervention", "Shuffle inputs and labels with one permutation.")
    page.fill("#confirmation", "The loss on the batch goes to about zero.")
    page.get_by_role("button", name="Record the diagnosis").click()
    expect(page.locator("#experiments")).to_be_visible()
    case_runs_settled(page)

    page.locator("#code-verdicts").get_by_role("link", name="Open the loop in the editor").click()
    expect(page.get_by_role("heading", name="Fix it in code", level=1)).to_be_visible()
    expect(page.locator(".cm-editor")).to_be_visible()  # the exercise pages' editor
    page.locator("#code-verdict-form").get_by_label(re.compile("re-permuted")).check()
    replace_code(page, EXERCISE.solution)
    page.get_by_role("button", name="Run my fix and reveal").click()
    expect(page).to_have_url(re.compile(r"/cases/attempts/\d+"))

    # The case page follows the run live; a reload shows the same once it has ended.
    for _ in range(60):
        if page.locator("#reveal").count():
            break
        page.wait_for_timeout(2_000)
        page.reload()
    reveal = page.locator("#reveal")
    expect(reveal).to_be_visible()
    expect(reveal.locator("#code-verdict")).to_contain_text(EXERCISE.title)
    expect(reveal.locator("#learner-diff")).to_contain_text("order = torch.randperm(len(features))")
    expect(reveal.locator("#reference-diff")).to_contain_text(
        "order = torch.randperm(len(features))"
    )
    expect(reveal.locator(".check").first).to_be_visible()
    # Whatever was drawn, the page says why the code earned the fix point or not.
    expect(reveal.locator("#code-verdict-why")).not_to_be_empty()
    assert errors == []
