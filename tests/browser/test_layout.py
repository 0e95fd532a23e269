"""Every page type, as a visitor, a learner, an instructor and an admin, at a phone's width (390 px)
and a laptop's (1366 px): nothing scrolls sideways (wide tables scroll inside their own box), and
axe-core finds no serious or critical accessibility problem.

axe-core comes from the npm registry (a devDependency in package-lock.json) and is injected into
the test browser only; the app never serves it."""

import json
import re
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.browser.conftest import ADMIN, FINAL_PANEL, ROOT, case_runs_settled, log_in, register
from tests.browser.test_case_flow import diagnose, start, verdict
from tests.browser.test_round_flow import fill_diagnosis, open_round

pytestmark = [pytest.mark.browser, pytest.mark.slow]

AXE = ROOT / "node_modules" / "axe-core" / "axe.min.js"
SHOTS = ROOT / "test-results" / "layout"
WIDTHS = {"phone": (390, 844), "laptop": (1366, 768)}
CASE_SOLVED = "A fresh head on a feature extractor"
CASE_OPEN = "A fine curve and a suspicious checkpoint"


@dataclass(repr=False)
class World:
    """What the pages show: made once through the UI, then visited by everyone."""

    base: str
    states: dict[str, Any] = field(default_factory=dict)  # role -> Playwright storage state
    ids: dict[str, str] = field(default_factory=dict)  # what paths need: attempt, submission...

    def __repr__(self) -> str:  # pytest prints parameters of a failed test: keep it to a line
        return f"World({self.base})"


def run_first_hypothesis(page: Page, base: str, slug: str, knobs: dict[str, str]) -> str:
    """Runs a drill with its first hypothesis and the given knobs; returns the attempt's id."""
    page.goto(f"{base}/drills/{slug}")
    page.locator('input[name="hypothesis"]').first.check()
    page.fill("#prediction", "The loss settles where the bug lets it.")
    for name, value in knobs.items():
        page.select_option(f"#knob-{name}", value)
    page.locator("#run-button").click()
    final = page.locator(FINAL_PANEL)
    expect(final).to_be_visible(timeout=90_000)
    return final.get_attribute("data-attempt") or ""


def attempt_id_from(url: str) -> str:
    match = re.search(r"/(\d+)(?:#.*)?$", url)
    assert match, url
    return match.group(1)


@pytest.fixture(scope="module")
def world(browser: Browser, live_server: str) -> Iterator[World]:
    base = live_server
    world = World(base=base)
    contexts = {role: browser.new_context() for role in ("learner", "instructor", "admin")}
    learner, instructor, admin = (contexts[r].new_page() for r in contexts)

    register(instructor, base, "fit-instructor")
    log_in(admin, base, ADMIN)
    admin.goto(f"{base}/admin/users")
    admin.get_by_label("role of fit-instructor").select_option("instructor")
    admin.locator("tr", has_text="fit-instructor").get_by_role("button", name="Save").click()
    expect(admin.get_by_label("role of fit-instructor")).to_have_value("instructor")
    instructor.goto(f"{base}/cohorts")
    instructor.fill("#cohort-name", "Layout cohort with a rather long name to wrap")
    instructor.get_by_role("button", name="Create cohort").click()
    world.ids["cohort"] = attempt_id_from(instructor.url)
    code = instructor.locator("#join-code").inner_text()

    register(learner, base, "fit-learner-with-a-long-username")
    learner.fill("#join-code", code)
    learner.get_by_role("button", name="Join").click()
    expect(learner.get_by_text("You joined the cohort.")).to_be_visible()

    world.ids["failed"] = run_first_hypothesis(
        learner, base, "overfit-one-batch", {"bug": "shuffled-labels"}
    )
    world.ids["fixed"] = run_first_hypothesis(learner, base, "overfit-one-batch", {"bug": "none"})
    # Drills whose attempt pages carry the widest tables: decoded pairs and per-layer heat maps.
    world.ids["tables"] = run_first_hypothesis(learner, base, "double-shift-labels", {})
    world.ids["heatmaps"] = run_first_hypothesis(learner, base, "init-check", {})

    learner.goto(f"{base}/drills/overfit-one-batch")
    learner.select_option("#failed-attempt", world.ids["failed"])
    learner.select_option("#fixed-attempt", world.ids["fixed"])
    for name in ("mechanism", "right_tool", "wrong_tool", "next_check"):
        learner.fill(f"#submit-{name}", f"A sentence for {name} that is long enough to wrap twice.")
    learner.get_by_role("button", name="Submit for review").click()
    expect(learner.locator("#submission-status")).to_have_text("pending")
    world.ids["submission"] = attempt_id_from(learner.url)

    start(learner, base, CASE_SOLVED)
    case_runs_settled(learner)
    diagnose(learner, "without the backbone", "without the head", "How far each part moves")
    verdict(learner, "without the backbone", "Build the optimizer from model.parameters")
    world.ids["case_revealed"] = attempt_id_from(learner.url)
    start(learner, base, CASE_OPEN)
    case_runs_settled(learner)
    world.ids["case_open"] = attempt_id_from(learner.url)
    learner.goto(f"{base}/practice")
    world.ids["practice_item"] = learner.locator("#start-review").get_attribute("href") or ""
    learner.goto(f"{base}/practice/rounds")
    learner.locator("#start-round").click()
    open_round(learner)
    fill_diagnosis(learner)
    learner.locator("#answer-round").click()
    expect(learner.locator("#round-parts")).to_be_visible()
    world.ids["round_answered"] = attempt_id_from(learner.url)
    learner.locator("#next-round").click()
    open_round(learner)
    world.ids["round_open"] = attempt_id_from(learner.url)
    # A judged exercise run: the starter with a line added fails its checks.
    learner.goto(f"{base}/exercises/{EXERCISE}")
    learner.locator(".cm-content").click()
    learner.keyboard.press("Control+End")
    learner.keyboard.type("\n# looked at it\n")
    learner.get_by_role("button", name="Run my code").click()
    expect(learner.locator(FINAL_PANEL)).to_be_visible(timeout=90_000)
    world.ids["exercise_run"] = learner.url.removeprefix(base)

    for role, context in contexts.items():
        world.states[role] = context.storage_state()
    yield world
    for context in contexts.values():
        context.close()


# (role, page type, path): every page type each role reaches. Error pages are reached by the
# role most likely to meet them.
EXERCISE = "overfit-shuffled-pairs"
PAGES: list[tuple[str, str, Callable[[dict[str, str]], str]]] = [
    ("visitor", "catalogue", lambda ids: "/"),
    ("visitor", "login", lambda ids: "/login"),
    ("visitor", "register", lambda ids: "/register"),
    ("visitor", "cases", lambda ids: "/cases"),
    ("visitor", "error-401", lambda ids: "/progress"),
    ("learner", "catalogue", lambda ids: "/"),
    ("learner", "drill", lambda ids: "/drills/overfit-one-batch"),
    ("learner", "drill-knobs", lambda ids: "/drills/double-shift-labels"),
    ("learner", "attempt", lambda ids: f"/attempts/{ids['failed']}"),
    ("learner", "attempt-tables", lambda ids: f"/attempts/{ids['tables']}"),
    ("learner", "attempt-heatmaps", lambda ids: f"/attempts/{ids['heatmaps']}"),
    ("learner", "submission", lambda ids: f"/submissions/{ids['submission']}"),
    ("learner", "progress", lambda ids: "/progress"),
    ("learner", "cases", lambda ids: "/cases"),
    ("learner", "case-open", lambda ids: f"/cases/attempts/{ids['case_open']}"),
    ("learner", "case-revealed", lambda ids: f"/cases/attempts/{ids['case_revealed']}"),
    ("learner", "verify", lambda ids: "/portfolio/verify"),
    ("learner", "practice", lambda ids: "/practice"),
    ("learner", "practice-item", lambda ids: ids["practice_item"]),
    ("learner", "rounds", lambda ids: "/practice/rounds"),
    ("learner", "round-open", lambda ids: f"/practice/rounds/{ids['round_open']}"),
    ("learner", "round-answered", lambda ids: f"/practice/rounds/{ids['round_answered']}"),
    ("learner", "error-403", lambda ids: "/reviews"),
    ("learner", "error-404", lambda ids: "/attempts/999999"),
    ("learner", "error-405", lambda ids: "/logout"),
    ("learner", "error-422", lambda ids: "/attempts/0"),
    ("visitor", "exercises", lambda ids: "/exercises"),
    ("learner", "exercise", lambda ids: f"/exercises/{EXERCISE}"),
    ("learner", "exercise-run", lambda ids: ids["exercise_run"]),
    ("instructor", "exercise-run", lambda ids: ids["exercise_run"]),
    ("instructor", "review-queue", lambda ids: "/reviews"),
    ("instructor", "review", lambda ids: f"/submissions/{ids['submission']}"),
    ("instructor", "attempt", lambda ids: f"/attempts/{ids['tables']}"),
    ("instructor", "case-review", lambda ids: f"/cases/attempts/{ids['case_revealed']}"),
    ("instructor", "round-review", lambda ids: f"/practice/rounds/{ids['round_answered']}"),
    ("instructor", "cohorts", lambda ids: "/cohorts"),
    ("instructor", "cohort-grid", lambda ids: f"/cohorts/{ids['cohort']}"),
    ("admin", "users", lambda ids: "/admin/users"),
    ("admin", "catalogue", lambda ids: "/"),
    ("admin", "error-404", lambda ids: "/drills/no-such-drill"),
]


def overflowing(page: Page, width: int) -> list[str]:
    """The innermost elements that stick out past the viewport, to say what to fix."""
    found: list[str] = page.evaluate(
        """(width) => {
          const out = [...document.body.querySelectorAll("*")].filter((el) => {
            const box = el.getBoundingClientRect();
            if (box.right <= width + 0.5 || box.width === 0) return false;
            // A scrolling ancestor clips what sticks out, unless the element is absolutely
            // positioned and that ancestor is not its containing block (nor inside it).
            let escapes = getComputedStyle(el).position === "absolute";
            for (let up = el.parentElement; up; up = up.parentElement) {
              const style = getComputedStyle(up);
              if (escapes && style.position !== "static") escapes = false;
              if (!escapes && style.overflowX !== "visible") return false;
            }
            return true;
          });
          return out
            .filter((el) => !out.some((other) => other !== el && el.contains(other)))
            .slice(0, 8)
            .map((el) => `${el.tagName.toLowerCase()}#${el.id}.${[...el.classList].join(".")} ` +
                         `right=${Math.round(el.getBoundingClientRect().right)}`);
        }""",
        width,
    )
    return found


def axe_problems(page: Page) -> list[str]:
    """axe-core's serious and critical violations, one readable line per element."""
    page.evaluate(AXE.read_text())  # evaluated by the test driver: the page's CSP is not involved
    results = page.evaluate("async () => await axe.run(document, {resultTypes: ['violations']})")
    lines = []
    for violation in results["violations"]:
        if violation["impact"] not in ("serious", "critical"):
            continue
        for node in violation["nodes"]:
            summary = " ".join((node.get("failureSummary") or "").split())
            lines.append(
                f"{violation['impact']} {violation['id']} ({violation['help']}) at "
                f"{json.dumps(node['target'])}: {summary[:300]}"
            )
    return lines


@pytest.mark.parametrize("size", list(WIDTHS))
@pytest.mark.parametrize(("role", "kind", "path"), PAGES, ids=[f"{r}-{k}" for r, k, _ in PAGES])
def test_page_fits_and_is_accessible(
    browser: Browser,
    world: World,
    role: str,
    kind: str,
    path: Callable[[dict[str, str]], str],
    size: str,
) -> None:
    width, height = WIDTHS[size]
    context = browser.new_context(
        viewport={"width": width, "height": height}, storage_state=world.states.get(role)
    )
    try:
        page = context.new_page()
        page.goto(world.base + path(world.ids))
        page.wait_for_load_state("networkidle")
        # Charts are drawn after load; wait until each has its plot.
        page.wait_for_function(
            "() => [...document.querySelectorAll('figure.chart')].every((f) => f.dataset.drawn)"
        )
        SHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SHOTS / f"{role}-{kind}-{width}.png"), full_page=True)
        problems = []
        scroll_width = page.evaluate("document.documentElement.scrollWidth")
        if scroll_width > width:
            problems.append(
                f"{scroll_width} px wide; sticking out: " + "; ".join(overflowing(page, width))
            )
        problems += axe_problems(page)
        assert not problems, f"{role} {kind} at {width} px:\n" + "\n".join(problems)
    finally:
        context.close()


def test_axe_is_never_served(world: World) -> None:
    """axe-core is for the test browser: no static path of the app hands it out."""
    for path in ("/static/vendor/axe.min.js", "/node_modules/axe-core/axe.min.js"):
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(world.base + path, timeout=5)
        refused.value.close()
        assert refused.value.code == 404
    assert not any(Path(ROOT / "static").rglob("axe*"))


def test_run_status_and_verdict_are_announced(browser: Browser, world: World) -> None:
    """At phone width, a run's status and its verdict reach a polite live region that stays in
    the page while the run panel around it is replaced; its charts point at the numbers."""
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, storage_state=world.states["learner"]
    )
    try:
        page = context.new_page()
        page.goto(f"{world.base}/drills/overfit-one-batch")
        announcer = page.locator("#announcer")
        expect(announcer).to_have_attribute("role", "status")
        expect(announcer).to_have_attribute("aria-live", "polite")
        page.evaluate("document.getElementById('announcer').dataset.before = 'run'")
        page.get_by_label(re.compile("memorises the batch")).check()
        page.fill("#prediction", "The loss goes to zero.")
        page.fill("#knob-steps", "2000")  # long enough to see it live
        page.locator("#run-button").click()
        expect(page.locator("#run-panel.live #attempt-status")).to_have_attribute("role", "status")
        expect(announcer).to_contain_text(re.compile(r"Attempt \d+: (queued|running)"))
        expect(page.locator("#verdict")).to_be_visible(timeout=90_000)
        expect(announcer).to_contain_text("finished. Your leading hypothesis matched")
        # The same element throughout: a replaced live region would not be read out.
        expect(announcer).to_have_attribute("data-before", "run")
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
        chart = page.locator("#chart-loss")
        expect(chart).to_have_attribute("aria-describedby", "signature")
        expect(page.locator("#signature tbody tr")).not_to_have_count(0)
        assert axe_problems(page) == []
    finally:
        context.close()


def contrast(first: str, second: str) -> float:
    """WCAG contrast ratio of two computed colours ("rgb(r, g, b)")."""

    def luminance(colour: str) -> float:
        channels = [int(c) / 255 for c in re.findall(r"\d+", colour)[:3]]
        linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    light, dark = sorted((luminance(first), luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def test_badges_and_field_borders_meet_contrast(page: Page, world: World) -> None:
    """What axe cannot see on a finished page: the badge of a queued or running run (text, 4.5:1)
    and the border of a form field against the card it sits on (non-text, 3:1)."""
    page.goto(f"{world.base}/login")
    colours = page.evaluate(
        """() => {
          const card = document.querySelector(".card");
          const badge = document.createElement("span");
          card.appendChild(badge);
          const out = {};
          for (const status of ["queued", "running", "succeeded", "failed", "cancelled"]) {
            badge.className = "status status-" + status;
            const style = getComputedStyle(badge);
            out[status] = [style.color, style.backgroundColor];
          }
          out.field = [getComputedStyle(document.querySelector("#username")).borderTopColor,
                       getComputedStyle(card).backgroundColor];
          return out;
        }"""
    )
    field_colours = colours.pop("field")
    for status, (text, background) in colours.items():
        assert contrast(text, background) >= 4.5, (status, text, background)
    assert contrast(*field_colours) >= 3, field_colours
