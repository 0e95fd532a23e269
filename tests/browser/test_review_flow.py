"""Two people, two browsers: a learner and an instructor go through register → join → run →
submit → review → feedback → resubmit → accept, on the real server with its worker. On the way,
forms sent back with errors land focus on the first invalid field (a full page and an htmx
swap), and after a decision the next submission in the queue is one click away."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import ADMIN, log_in, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = Path(__file__).resolve().parents[2] / "test-results"


def run_drill(
    page: Page, base: str, *, bug: str, hypothesis: str, prediction: str, bad_seed: bool = False
) -> None:
    page.goto(f"{base}/drills/overfit-one-batch")
    page.get_by_label(re.compile(hypothesis)).check()
    page.fill("#prediction", prediction)
    page.select_option("#knob-bug", bug)
    if bad_seed:
        # Refused by the server: the form comes back through htmx, focus on the bad field.
        page.fill("#seed", "-1")
        page.locator("#run-button").click()
        expect(page.locator("#seed")).to_be_focused()
        expect(page.locator("#seed")).to_have_attribute("aria-describedby", "error-seed")
        expect(page.locator("#error-seed")).to_contain_text("between 0 and")
        page.fill("#seed", "0")
    page.locator("#run-button").click()
    expect(page.locator("#verdict")).to_be_visible(timeout=60_000)


def explain(page: Page, suffix: str) -> None:
    page.fill(
        "#submit-mechanism",
        f"Labels move between examples each step, so *nothing* ties a label to its input {suffix}.",
    )
    page.fill("#submit-right_tool", "Before a long run, to check the wiring in seconds.")
    page.fill("#submit-wrong_tool", "To judge whether the model generalises.")
    page.fill("#submit-next_check", "Print a few input/label pairs straight from the loader.")


def review(
    page: Page, base: str, *, score: str, comment: str, decision: str, from_queue: bool = True
) -> None:
    if from_queue:
        page.goto(f"{base}/reviews")
        page.locator("#queue").get_by_role("link", name="Review", exact=True).first.click()
    expect(page.locator("#evidence-failed")).to_be_visible()
    expect(page.locator("#evidence-fixed")).to_be_visible()
    expect(page.locator("#submitted-explanation em")).to_have_text("nothing")  # Markdown rendered
    for radio in page.locator(f'.rubric input[type=radio][value="{score}"]').all():
        radio.check()
    if decision == "Request changes":
        # Without the comment that asking for changes needs: the page comes back (a full page,
        # no htmx) scrolled to that field, focused, and naming what is missing.
        page.get_by_role("button", name=decision).click()
        comment_field = page.locator("#review-comment")
        expect(comment_field).to_be_focused()
        expect(comment_field).to_be_in_viewport()
        expect(comment_field).to_have_attribute("aria-invalid", "true")
        expect(page.locator("#error-comment")).to_have_text("say what to change")
        SHOTS.mkdir(exist_ok=True)
        page.screenshot(path=str(SHOTS / "review-error-focus.png"))
    page.fill("#review-comment", comment)
    SHOTS.mkdir(exist_ok=True)
    page.screenshot(
        path=str(SHOTS / f"review-{decision.lower().replace(' ', '-')}.png"), full_page=True
    )
    page.get_by_role("button", name=decision).click()


def test_learner_and_instructor_review_cycle(new_page: type[Page], live_server: str) -> None:
    base = live_server
    instructor, admin, learner = new_page(), new_page(), new_page()  # type: ignore[call-arg]

    # Every registration error at once; focus on the first of them.
    instructor.goto(f"{base}/register")
    instructor.fill("#username", "Ida!")
    instructor.fill("#password", "short")
    instructor.get_by_role("button", name="Create account").click()
    expect(instructor.locator("#username")).to_be_focused()
    for field in ("username", "password", "password_again"):
        expect(instructor.locator(f"#error-{field}")).to_be_visible()
    register(instructor, base, "ida-instructor")
    log_in(admin, base, ADMIN)
    admin.goto(f"{base}/admin/users")
    admin.get_by_label("role of ida-instructor").select_option("instructor")
    admin.locator("tr", has_text="ida-instructor").get_by_role("button", name="Save").click()
    expect(admin.get_by_label("role of ida-instructor")).to_have_value("instructor")

    instructor.goto(f"{base}/cohorts")
    instructor.fill("#cohort-name", "Autumn cohort")
    instructor.get_by_role("button", name="Create cohort").click()
    code = instructor.locator("#join-code").inner_text()
    assert re.fullmatch(r"[A-Z2-9]{8}", code)

    register(learner, base, "lee-learner")
    learner.fill("#join-code", code)
    learner.get_by_role("button", name="Join").click()
    expect(learner.get_by_text("You joined the cohort.")).to_be_visible()

    run_drill(
        learner,
        base,
        bug="shuffled-labels",
        hypothesis="memorises the batch",
        prediction="It will fit anyway.",
        bad_seed=True,
    )
    expect(learner.locator("#verdict")).to_contain_text("did not match")
    run_drill(
        learner,
        base,
        bug="none",
        hypothesis="memorises the batch",
        prediction="The loss goes to zero.",
    )
    expect(learner.locator("#verdict")).to_contain_text("matched")

    learner.reload()
    explain(learner, "(v1)")
    learner.get_by_role("button", name="Submit for review").click()
    expect(learner.locator("#submission-status")).to_have_text("pending")

    review(
        instructor,
        base,
        score="1",
        comment="Say **why** it settles at ln 4.",
        decision="Request changes",
    )
    expect(instructor.locator("#submission-status")).to_have_text("changes requested")
    expect(instructor.locator("#next-in-queue")).to_contain_text("Nothing else waits")

    learner.goto(f"{base}/drills/overfit-one-batch")
    feedback = learner.locator("#feedback")
    expect(feedback).to_contain_text("Changes requested")
    expect(feedback).to_contain_text("Say why it settles at ln 4.")
    expect(feedback.locator(".review-comment strong")).to_have_text("why")  # Markdown rendered
    # The resubmission starts from what version 1 said, not from empty fields.
    expect(learner.locator("#submit-mechanism")).to_have_value(re.compile(r"\(v1\)\.$"))
    expect(learner.locator("#submit-next_check")).to_have_value(
        "Print a few input/label pairs straight from the loader."
    )
    explain(learner, "(v2): the best it can do is predict how often each label occurs, ln 4")
    learner.get_by_role("button", name="Resubmit").click()
    expect(learner.locator("#submission-status")).to_have_text("pending")

    # The decided version's page now offers the resubmission as the next item: one click.
    instructor.reload()
    instructor.locator("#next-in-queue-link").click()
    expect(instructor.locator("h1")).to_contain_text("version 2")
    review(
        instructor,
        base,
        score="2",
        comment="Clear and honest.",
        decision="Accept",
        from_queue=False,
    )
    expect(instructor.locator("#submission-status")).to_have_text("accepted")
    instructor.goto(f"{base}/cohorts")
    instructor.get_by_role("link", name="Autumn cohort").click()
    expect(instructor.locator("#cohort-grid")).to_contain_text("accepted")

    learner.goto(f"{base}/progress")
    expect(learner.locator('[data-drill="overfit-one-batch"]')).to_have_text("accepted")
    expect(learner.locator('[data-feedback="overfit-one-batch"]')).to_contain_text(
        "Clear and honest."
    )
    learner.goto(f"{base}/drills/overfit-one-batch")
    expect(learner.locator("#version-2")).to_contain_text("accepted")
    expect(learner.locator("#version-1")).to_contain_text("Say why it settles at ln 4.")
    learner.screenshot(path=str(SHOTS / "learner-feedback.png"), full_page=True)
