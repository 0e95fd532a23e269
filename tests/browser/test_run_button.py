"""The Run button (issue 30, points 1 and 8): on the first screen of a 1366×768 laptop beside the
prediction, reachable at 390 px without scrolling sideways, and one run per press however fast
it is pressed twice."""

import re

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import FINAL_PANEL, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def history_rows(page: Page) -> int:
    return page.locator("#attempt-history tbody tr").count()


def predict(page: Page) -> None:
    page.get_by_label(re.compile("memorises the batch")).check()
    page.fill("#prediction", "The loss falls to about zero.")


def test_run_sits_on_the_first_screen_beside_the_prediction(
    browser: Browser, live_server: str
) -> None:
    context = browser.new_context(viewport={"width": 1366, "height": 768})
    page = context.new_page()
    register(page, live_server, "first-screen")
    for slug in ("overfit-one-batch", "lr-sweep", "init-check"):
        page.goto(f"{live_server}/drills/{slug}")
        run = page.locator("#run-button").bounding_box()
        prediction = page.locator("#prediction").bounding_box()
        assert run is not None and prediction is not None
        assert run["y"] + run["height"] < 768, (slug, run)  # all of it on the first screen
        assert prediction["y"] < run["y"] < prediction["y"] + 400, slug
        # The right-hand column holds the prediction and Run, not an empty placeholder.
        assert run["x"] > 1366 / 3, (slug, run)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{live_server}/drills/overfit-one-batch")
    run = page.locator("#run-button").bounding_box()
    assert run is not None and run["x"] >= 0 and run["x"] + run["width"] <= 390
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    context.close()


def test_a_double_click_on_run_starts_one_run(page: Page, live_server: str) -> None:
    posts: list[str] = []
    page.on(
        "request",
        lambda request: (
            posts.append(request.url)
            if request.method == "POST" and request.url.endswith("/attempts")
            else None
        ),
    )
    register(page, live_server, "double-clicker")
    page.goto(f"{live_server}/drills/overfit-one-batch")
    predict(page)
    page.fill("#knob-steps", "400")
    page.locator("#run-button").dblclick()
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=60_000)
    expect(page.locator("#attempt-history tbody tr")).to_have_count(1)
    assert len(posts) == 1, posts  # the second click found Run disabled
    # Two submits of the form in one moment (what Enter in a field does, twice, before the
    # answer comes): one more request, one more run.
    page.fill("#knob-steps", "401")
    page.evaluate(
        """() => {
      const form = document.getElementById("attempt-form");
      form.requestSubmit();
      form.requestSubmit();
    }"""
    )
    expect(page.locator("#attempt-history tbody tr")).to_have_count(2, timeout=60_000)
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=60_000)
    page.wait_for_timeout(500)
    assert history_rows(page) == 2
    assert len(posts) == 2, posts
    # The form got a fresh token with each answer: a third press is a third run.
    page.locator("#run-button").click()
    expect(page.locator("#attempt-history tbody tr")).to_have_count(3, timeout=60_000)
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=60_000)


def test_a_new_learner_is_welcomed_and_pointed_to_a_first_drill(
    page: Page, live_server: str
) -> None:
    register(page, live_server, "newcomer")
    welcome = page.locator("#welcome")
    expect(welcome).to_contain_text("Welcome")
    page.locator("#first-drill").click()
    expect(page).to_have_url(re.compile(r"/drills/overfit-one-batch$"))
