"""The exported HTML opens in headless Chromium with every network request blocked and shows
every chart: it is one self-contained file."""

import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, Request

from drills.core.registry import get_drill
from tests.browser.conftest import register

pytestmark = [pytest.mark.browser, pytest.mark.slow]
DRILL = "overfit-one-batch"


def run_attempt(page: Page, base: str, bug: str) -> int:
    """A real run through the HTTP API, in the logged-in page's own session."""
    token = page.request.get(f"{base}/api/session").json()["csrf_token"]
    body = {
        "drill": DRILL,
        "hypothesis": "fits",
        "prediction": "The loss drops to about zero.",
        "knobs": {"bug": bug, "steps": 40},
    }
    created = page.request.post(
        f"{base}/api/attempts", data=body, headers={"X-CSRF-Token": token}
    ).json()
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        state: dict[str, Any] = page.request.get(f"{base}/api/attempts/{created['id']}").json()
        if state["status"] not in ("queued", "running"):
            assert state["status"] == "succeeded", state
            return int(created["id"])
        time.sleep(0.2)
    raise AssertionError("the run did not finish")


def test_the_exported_html_opens_offline_with_every_chart(
    browser: Browser, page: Page, live_server: str, tmp_path: Path
) -> None:
    register(page, live_server, "offline-learner")
    for bug in ("shuffled-labels", "none"):
        run_attempt(page, live_server, bug)
    download = page.request.get(f"{live_server}/portfolio/export.html")
    assert download.ok
    assert download.headers["content-disposition"].startswith(
        'attachment; filename="drillbook-portfolio-offline-learner-'
    )
    file = tmp_path / "portfolio.html"
    file.write_bytes(download.body())
    charts = 2 * len(get_drill(DRILL).charts)

    context = browser.new_context()
    context.set_offline(True)
    requested: list[str] = []
    failed: list[str] = []
    blocked: list[str] = []

    def block(route: Any) -> None:
        # Chromium routes file:// too: let the export itself through, refuse everything else.
        if route.request.url == file.as_uri():
            route.continue_()
            return
        blocked.append(route.request.url)
        route.abort()

    context.route("**/*", block)
    offline = context.new_page()
    offline.on("request", lambda request: requested.append(request.url))
    offline.on("requestfailed", lambda request: failed.append(_describe(request)))
    try:
        offline.goto(file.as_uri())
        _assert_every_chart_drawn(offline, charts)
        # The same markup handed straight to the page, with no file at all.
        offline.set_content(file.read_text(encoding="utf-8"))
        _assert_every_chart_drawn(offline, charts)
    finally:
        context.close()
    assert failed == [] and blocked == []
    assert [url for url in requested if url != file.as_uri()] == []


def _assert_every_chart_drawn(page: Page, charts: int) -> None:
    assert page.locator("svg.chart").count() == charts
    assert page.locator("figure.chart-figure").count() == charts
    for index in range(charts):
        svg = page.locator("svg.chart").nth(index)
        box = svg.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 100
        assert svg.locator("path.trace").count() >= 1
        # Each axis labels its ticks once each, as the browser renders them (a log axis once
        # read "1e0" five times).
        for axis in ("x", "y"):
            labels = svg.locator(f"text.{axis}-tick").all_text_contents()
            assert len(labels) >= 2 and len(set(labels)) == len(labels), (index, axis, labels)
    assert page.locator("script").count() == 0
    # The drill's gradient-norm chart has a log axis: the case the repeated labels came from.
    log_charts = page.locator("figure.chart-figure[data-chart=grad_norm] svg.chart")
    assert log_charts.count() == 2
    for index in range(2):
        assert "(log)" in " ".join(log_charts.nth(index).locator("text").all_text_contents())


def _describe(request: Request) -> str:
    return f"{request.url}: {request.failure}"
