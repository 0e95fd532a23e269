"""A learner opens the drill, predicts, runs the clean variant, watches the chart grow, sees the
result: in headless Chromium against the real server and its worker process."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import register

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def points_plotted(page: Page) -> int:
    return int(page.locator("#chart-loss").get_attribute("data-points") or 0)


def test_predict_run_watch_and_compare(page: Page, live_server: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    register(page, live_server, "solo-learner")
    page.goto(f"{live_server}/")
    page.get_by_role("link", name="Overfit a single batch").click()
    expect(page).to_have_url(re.compile(r"/drills/overfit-one-batch$"))

    run = page.locator("#run-button")
    expect(run).to_be_disabled()
    page.get_by_label(re.compile("memorises the batch")).check()
    expect(run).to_be_disabled()  # a hypothesis alone is not a prediction
    page.fill("#prediction", "The loss falls to about zero and the correct class gets p near 1.")
    expect(run).to_be_enabled()

    page.select_option("#knob-bug", "none")
    page.fill("#knob-steps", "2000")  # long enough to watch it stream
    run.click()

    expect(page.locator("#run-panel.live")).to_be_visible()
    page.wait_for_function(
        "() => Number(document.querySelector('#chart-loss')?.dataset.points || 0) > 0"
    )
    first = points_plotted(page)
    page.wait_for_function(
        f"() => Number(document.querySelector('#chart-loss')?.dataset.points || 0) > {first}"
    )
    assert points_plotted(page) > first  # the chart grew while the job ran

    expect(page.locator("#verdict")).to_contain_text("matched", timeout=60_000)
    expect(page.locator("#attempt-status")).to_have_text("succeeded")
    expect(page.locator("#health tbody tr")).not_to_have_count(0)
    expect(page.locator("#signature")).to_contain_text("Final loss")
    expect(page.locator("#attempt-history tbody tr")).to_have_count(1)
    # The finished panel redraws from the store: every step is plotted.
    assert points_plotted(page) == 2000

    # Nothing was fetched from anywhere but our own server.
    assert all(url.startswith(live_server) for url in requests), requests

    # A reload of the attempt page shows the complete record.
    page.goto(live_server + page.locator("#run-panel h2 a").get_attribute("href"))  # type: ignore[operator]
    expect(page.locator("#verdict")).to_contain_text("matched")
    assert points_plotted(page) == 2000
