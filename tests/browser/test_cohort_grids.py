"""An instructor reads a cohort's case grid on a laptop (1366 px) (issue 30, point 5): the grid is
far wider than the page, so it scrolls inside its own box (by keyboard too) while the learners'
names stay where they were, above the cells passing under them, and the page itself never
scrolls sideways."""

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, ViewportSize, expect

from tests.browser.conftest import ADMIN, log_in, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]

LAPTOP: ViewportSize = {"width": 1366, "height": 768}


@pytest.fixture
def cohort_page(browser: Browser, live_server: str) -> Iterator[Page]:
    """The instructor's page of a cohort with one learner in it (the case grid has a column per
    case in the catalogue, whatever the learners have done)."""
    base = live_server
    people = [browser.new_context(viewport=LAPTOP) for _ in range(3)]
    try:
        instructor, admin, learner = (context.new_page() for context in people)
        register(instructor, base, "grid-instructor")
        log_in(admin, base, ADMIN)
        admin.goto(f"{base}/admin/users")
        admin.get_by_label("role of grid-instructor").select_option("instructor")
        admin.locator("tr", has_text="grid-instructor").get_by_role("button", name="Save").click()
        expect(admin.get_by_label("role of grid-instructor")).to_have_value("instructor")
        instructor.goto(f"{base}/cohorts")
        instructor.fill("#cohort-name", "Grid cohort")
        instructor.get_by_role("button", name="Create cohort").click()
        expect(instructor.locator("#join-code")).to_be_visible()
        code = instructor.locator("#join-code").inner_text()
        register(learner, base, "grid-learner")
        learner.fill("#join-code", code)
        learner.get_by_role("button", name="Join").click()
        expect(learner.get_by_text("You joined the cohort.")).to_be_visible()
        instructor.reload()
        yield instructor
    finally:
        for context in people:
            context.close()


def test_the_case_grid_scrolls_under_a_name_that_stays_put(cohort_page: Page) -> None:
    page = cohort_page
    region = page.get_by_role("region", name="Learners by case")
    name = page.locator("#case-grid tbody th").first
    expect(name).to_have_text("Grid Learner")
    sizes = region.evaluate("(el) => [el.scrollWidth, el.clientWidth]")
    assert sizes[0] > 2 * sizes[1], f"the case grid should overflow its box: {sizes}"
    before = name.bounding_box()
    assert before is not None

    # By keyboard: the region takes focus and the arrow keys scroll it.
    region.focus()
    expect(region).to_be_focused()
    for _ in range(5):
        page.keyboard.press("ArrowRight")
    page.wait_for_function("(el) => el.scrollLeft > 0", arg=region.element_handle(), timeout=5_000)
    # Then all the way to the last column.
    region.evaluate("(el) => { el.scrollLeft = el.scrollWidth; }")
    assert region.evaluate("(el) => el.scrollLeft + el.clientWidth >= el.scrollWidth - 1")

    after = name.bounding_box()
    assert after is not None
    assert abs(after["x"] - before["x"]) < 0.5, (before, after)
    # The name is drawn above the cells scrolled under it (opaque, on top), and the last
    # column has come into view beside it.
    on_top = name.evaluate(
        """(el) => {
          const box = el.getBoundingClientRect();
          const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
          return el.contains(hit);
        }"""
    )
    assert on_top
    style = name.evaluate(
        "(el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).borderRightWidth]"
    )
    assert style[0] not in ("rgba(0, 0, 0, 0)", "transparent"), style  # opaque
    assert float(style[1].removesuffix("px")) >= 1, style  # an edge the cells pass under
    last = page.locator("#case-grid tbody tr").first.locator("td").last
    last_box, region_box = last.bounding_box(), region.bounding_box()
    assert last_box is not None and region_box is not None
    assert last_box["x"] + last_box["width"] <= region_box["x"] + region_box["width"] + 1

    # The grid scrolled, the page did not.
    assert page.evaluate("document.documentElement.scrollWidth") <= LAPTOP["width"]
    assert page.evaluate("window.scrollX") == 0
