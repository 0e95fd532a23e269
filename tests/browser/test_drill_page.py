"""A learner opens the drill, predicts, runs the clean variant, watches the chart grow, sees the
result: in headless Chromium against the real server and its worker process."""

import re

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import FINAL_PANEL, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def points_plotted(page: Page) -> int:
    return int(page.locator("#chart-loss").get_attribute("data-points") or 0)


def test_predict_run_watch_and_compare(page: Page, live_server: str) -> None:
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    register(page, live_server, "solo-learner")
    page.goto(f"{live_server}/")
    page.get_by_role("link", name="Overfit a single batch", exact=True).click()
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
    expect(page.locator("#attempt-status")).to_have_text("finished")
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


# A chart of a finished run whose series hold no points, added the way htmx adds a partial.
EMPTY_CHART = """() => {
  const figure = document.createElement("figure");
  figure.className = "chart";
  figure.id = "empty-probe";
  figure.dataset.chart = JSON.stringify({key: "probe", title: "Probe", metrics: ["loss"],
    y_label: "loss", log_y: false, references: [], kind: "lines", labels: {loss: "training loss"}});
  figure.dataset.series = "{}";
  figure.innerHTML = "<figcaption>Probe</figcaption>";
  const partial = document.createElement("div");
  partial.appendChild(figure);
  document.body.appendChild(partial);
  partial.dispatchEvent(new CustomEvent("htmx:load", {bubbles: true}));
}"""


def run_from_drill_page(page: Page, seed: int) -> str:
    """Predict and run the drill open in `page`; the finished attempt's id."""
    page.locator('input[name="hypothesis"]').first.check()
    page.fill("#prediction", "Each rate behaves differently.")
    page.fill("#seed", str(seed))
    page.locator("#run-button").click()
    panel = page.locator(FINAL_PANEL)
    expect(panel).to_be_visible(timeout=60_000)
    attempt_id = panel.get_attribute("data-attempt")
    assert attempt_id
    return attempt_id


def test_overlay_of_earlier_attempts_and_a_log_axis_in_one_number_format(
    page: Page, live_server: str
) -> None:
    register(page, live_server, "sweep-learner")
    page.goto(f"{live_server}/drills/lr-sweep")
    first = run_from_drill_page(page, 0)
    page.goto(f"{live_server}/drills/lr-sweep")
    second = run_from_drill_page(page, 1)

    page.goto(f"{live_server}/attempts/{second}")
    loss = page.locator("#chart-loss")
    expect(loss).to_have_attribute("data-traces", "4")  # one per learning rate
    # The losses span 1 to 1e36: the axis is clipped to the other rates (tests/browser/
    # test_chart_views.py); shown whole, the log axis labels them in one exponent format, with
    # no SI suffix (1µ, 1B) anywhere and each label once.
    loss.get_by_role("button", name="Show all").click()
    ticks = [t.strip() for t in loss.locator(".ytick text").all_text_contents()]
    assert ticks and all(re.fullmatch(r"[\d.]+(e[−+-]?\d+)?", t) for t in ticks), ticks
    assert any("e+" in t for t in ticks), ticks
    assert len(ticks) == len(set(ticks)), ticks
    loss.get_by_role("button", name="Reset view").click()
    legend = " ".join(loss.locator(".legendtext").all_text_contents())
    assert "lr=0.01" in legend and "loss@" not in legend

    page.locator("#compare-runs summary").click()
    page.check(f'input[name="compare"][value="{first}"]')
    page.get_by_role("button", name="Overlay the chosen runs").click()
    expect(page).to_have_url(re.compile(rf"/attempts/{second}\?compare={first}$"))
    for key in ("loss", "grad_norm", "update_norm"):
        expect(page.locator(f"#chart-{key}")).to_have_attribute("data-traces", "8")
    legends = page.locator("#chart-loss .legendtext").all_text_contents()
    assert f"#{first} lr=0.01" in legends and f"#{second} lr=0.01" in legends, legends

    # A finished run's chart with no points says so instead of drawing empty axes.
    page.evaluate(EMPTY_CHART)
    expect(page.locator("#empty-probe .chart-empty")).to_contain_text(
        "No points recorded for training loss"
    )
    expect(page.locator("#empty-probe .plot")).to_have_count(0)

    # Someone's refused id is a page that says so, not a crash.
    response = page.goto(f"{live_server}/attempts/{second}?compare=banana")
    assert response is not None and response.status == 422


def test_a_hidden_bug_run_names_its_setup_only_with_the_result(
    page: Page, live_server: str
) -> None:
    register(page, live_server, "hidden-bug-learner")
    page.goto(f"{live_server}/drills/overfit-one-batch")
    own = page.locator("#knob-bug")  # a control of the learner's own setup
    expect(own).to_be_enabled()
    page.locator("#hidden-setup").check()
    expect(own).to_be_disabled()  # the learner's own knobs are set aside, and not sent
    page.get_by_label(re.compile("memorises the batch")).check()
    page.fill("#prediction", "The loss falls to about zero.")
    page.locator("#run-button").click()
    panel = page.locator("#run-panel")
    expect(panel.locator("#setup-hidden")).to_be_visible()
    expect(panel).not_to_contain_text("python -m drills run")
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=90_000)
    revealed = page.locator("#setup-revealed")
    expect(revealed).to_contain_text(re.compile(r"bug=\S+ .*seed=\d+"))
    expect(panel).to_contain_text("python -m drills run overfit-one-batch")
    # The choice stays as it was for the next run.
    expect(page.locator("#hidden-setup")).to_be_checked()


def test_a_second_tab_lists_a_run_started_in_the_first_once_looked_at(
    page: Page, live_server: str
) -> None:
    register(page, live_server, "two-tab-learner")
    other = page.context.new_page()
    for tab in (page, other):
        tab.goto(f"{live_server}/drills/overfit-one-batch")
    page.get_by_label(re.compile("memorises the batch")).check()
    page.fill("#prediction", "The loss falls to about zero.")
    page.locator("#run-button").click()
    expect(page.locator("#attempt-history tbody tr")).to_have_count(1)
    expect(other.locator("#attempt-history tbody tr")).to_have_count(0)
    # What a browser sends when the learner comes back to the tab.
    other.evaluate("document.dispatchEvent(new Event('visibilitychange'))")
    expect(other.locator("#attempt-history tbody tr")).to_have_count(1)
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=90_000)
