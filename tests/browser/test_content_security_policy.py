"""Every page type works under the app's Content-Security-Policy: no inline script or style is
refused (htmx's indicator styles, plotly's injected styles, template markup), and the plotly chart
still renders, live and on the attempt page."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import register

pytestmark = [pytest.mark.browser, pytest.mark.slow]

REPORT_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.reportViolation(
    `${event.violatedDirective} blocked ${event.blockedURI || "inline"} at ${event.sourceFile}`
  );
});
"""


def watch_violations(page: Page) -> list[str]:
    """Violations as the page reports them and as Chromium logs them to the console."""
    seen: list[str] = []

    def report(text: str) -> None:
        seen.append(text)

    page.expose_function("reportViolation", report)
    page.add_init_script(REPORT_VIOLATIONS)
    page.on(
        "console",
        lambda message: (
            seen.append(message.text) if "Content Security Policy" in message.text else None
        ),
    )
    return seen


def expect_chart_drawn(page: Page, chart: str) -> None:
    figure = page.locator(chart)
    expect(figure.locator(".js-plotly-plot .main-svg").first).to_be_visible()
    expect(figure.locator(".scatterlayer .trace").first).to_be_attached()
    assert int(figure.get_attribute("data-points") or 0) > 0


def test_every_page_type_runs_under_the_policy(page: Page, live_server: str) -> None:
    violations = watch_violations(page)

    def visit(path: str) -> None:
        page.goto(live_server + path)

    visit("/login")
    register(page, live_server, "csp-learner")  # the register page, then progress
    visit("/")
    expect(page.get_by_role("link", name="Overfit a single batch", exact=True)).to_be_visible()
    visit("/drills/overfit-one-batch")
    page.get_by_label(re.compile("memorises the batch")).check()
    page.fill("#prediction", "The loss falls to about zero.")
    page.select_option("#knob-bug", "none")
    page.fill("#knob-steps", "1000")
    page.locator("#run-button").click()  # an htmx swap, then the event stream
    expect(page.locator("#run-panel.live")).to_be_visible()
    page.wait_for_function(
        "() => Number(document.querySelector('#chart-loss')?.dataset.points || 0) > 0"
    )
    expect_chart_drawn(page, "#chart-loss")
    expect(page.locator("#verdict")).to_be_visible(timeout=60_000)
    expect_chart_drawn(page, "#chart-loss")

    attempt = page.locator("#run-panel h2 a").get_attribute("href")
    assert attempt is not None
    visit(attempt)
    expect(page.locator("#verdict")).to_be_visible()
    expect_chart_drawn(page, "#chart-loss")
    # A drill whose charts include heat maps (per-layer gradients) and a reference line.
    visit("/drills/init-check")
    page.locator("input[name=hypothesis]").first.check()
    page.fill("#prediction", "One layer never fires.")
    page.select_option("#knob-init", "dead-relu")
    page.locator("#run-button").click()
    expect(page.locator("#verdict")).to_be_visible(timeout=60_000)
    expect(page.locator("#chart-grad .js-plotly-plot .heatmaplayer").first).to_be_attached()
    visit("/progress")
    visit("/portfolio/verify")

    assert violations == [], "\n".join(sorted(set(violations)))
    # The policy the pages ran under is the app's.
    response = page.request.get(live_server + "/")
    assert "script-src 'self'" in response.headers["content-security-policy"]
