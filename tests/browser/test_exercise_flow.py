"""A learner opens a code exercise, runs the starter edited, reads the failed checks, climbs the
hint ladder, fixes the file in the editor, passes, and reads the reference's diff: in headless
Chromium against the real server, its worker and the sandbox. Three more of the track solved from
their pages (a tool to write, two loops of other drills to fix), and a plausible wrong fix that
the judge turns down for a reason it states. And the editor by keyboard: Tab indents, Esc then Tab
leaves it, and Reset brings the starter back."""

import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from drills.exercises.registry import get_exercise
from drills.sandbox import available
from tests.browser.conftest import FINAL_PANEL, register

pytestmark = [pytest.mark.browser, pytest.mark.slow]
# Only running code needs the sandbox; the editor works on a server without one.
needs_sandbox = pytest.mark.skipif(available() is not None, reason=f"no sandbox: {available()}")

SLUG = "overfit-shuffled-pairs"


# A hint is a form post, a database write and a page load: on a loaded machine (a CI run, the
# other test process busy) it took over expect's 5 s once, with nothing wrong on the page.
HINT_WAIT_MS = 30_000


def take_every_hint(page: Page, hints: int) -> None:
    """Take the hints one by one, each shown before the next is asked for."""
    for rung in range(1, hints + 1):
        page.get_by_role("button", name=re.compile(f"Show hint {rung} of")).click()
        expect(page.locator("#hints li")).to_have_count(rung, timeout=HINT_WAIT_MS)


def replace_code(page: Page, text: str) -> None:
    """Empty the editor, then put `text` in, as a paste would. (Inserted over a selection,
    Chrome's own editing first wraps the text in a span styled like the text it replaces,
    which the page's CSP rightly refuses; the editor redraws it either way.)"""
    page.locator(".cm-content").click()
    page.keyboard.press("Control+a")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(text)


@needs_sandbox
def test_edit_run_read_the_checks_take_hints_fix_and_see_the_reference(
    page: Page, live_server: str
) -> None:
    exercise = get_exercise(SLUG)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on(
        "console",
        lambda message: (
            errors.append(f"{page.url}: {message.text}") if message.type == "error" else None
        ),
    )
    register(page, live_server, "coder")
    page.goto(f"{live_server}/exercises")
    page.get_by_role("link", name=exercise.title).click()
    expect(page).to_have_url(re.compile(f"/exercises/{SLUG}$"))
    editor = page.locator(".cm-editor")
    expect(editor).to_be_visible()
    expect(page.locator("textarea#code")).to_be_hidden()  # the editor stands in for it

    # A change that fixes nothing: judged, and the checks say which batches do not fit.
    replace_code(page, exercise.starter + "\n# Looks fine to me.\n")
    page.get_by_role("button", name="Show my changes").click()
    expect(page.locator(".cm-changedLine, .cm-insertedLine").first).to_be_visible()
    page.get_by_role("button", name="Hide my changes").click()
    page.get_by_role("button", name="Run my code").click()
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=90_000)
    expect(page.locator(".judgement-block")).to_contain_text("failed")
    expect(page.locator(".check-fail").first).to_be_visible()
    expect(page.locator(".code-diff pre")).to_contain_text("+# Looks fine to me.")
    # Beside the replay command, the file it reads, as submitted and under the name it uses.
    with page.expect_download() as download:
        page.get_by_role("link", name="Download the file it reads").click()
    assert download.value.suggested_filename == "exercise.py"
    saved = Path(download.value.path()).read_text(encoding="utf-8")
    assert saved == exercise.starter + "\n# Looks fine to me.\n"

    # The hint ladder, then the fix typed into the editor (which opens on the last code).
    page.get_by_role("link", name="Back to the editor").click()
    # (The editor draws only the lines in view; the form's field holds the whole file.)
    expect(page.locator("textarea#code")).to_have_value(re.compile("Looks fine to me"))
    take_every_hint(page, len(exercise.hints))
    replace_code(page, exercise.solution)
    page.get_by_role("button", name="Run my code").click()
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=90_000)
    expect(page.locator(".judgement-block")).to_contain_text("passed")
    expect(page.locator(".check-fail")).to_have_count(0)

    # The reference, earned: its diff from the starter.
    page.get_by_role("link", name="Back to the editor").click()
    page.get_by_role("button", name="Show the reference solution").click()
    expect(page.locator("#solution pre.diff")).to_contain_text("+++ solution.py")
    assert errors == [], "\n".join(errors)


FIXTURES = Path(__file__).resolve().parents[1] / "exercises" / "fixtures"
# A write-it tool and two fix-the-loop exercises of other drills, each solved from its page: two
# with a learner's right file written otherwise than the reference (tests/exercises/fixtures/),
# one with the reference itself.
SOLVED = {
    "parameter-audit": FIXTURES / "parameter_audit" / "right_flat_sums.py",
    "lr-sweep-choose-rate": FIXTURES / "lr_sweep_choose_rate" / "right_manual_steps_state_dict.py",
    "optimizer-new-head": None,
}


def run_code(page: Page, code: str) -> None:
    replace_code(page, code)
    page.get_by_role("button", name="Run my code").click()
    expect(page.locator(FINAL_PANEL)).to_be_visible(timeout=90_000)


@needs_sandbox
@pytest.mark.parametrize("slug", list(SOLVED))
def test_an_exercise_of_the_track_is_solved_from_its_page(
    page: Page, live_server: str, slug: str
) -> None:
    exercise = get_exercise(slug)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    register(page, live_server, f"solver{list(SOLVED).index(slug)}")
    page.goto(f"{live_server}/exercises")
    page.get_by_role("link", name=exercise.title).click()
    # What a learner has to go on: the story, what the file provides, and every hint.
    expect(page.locator(".story")).to_contain_text(exercise.provides[0])
    take_every_hint(page, len(exercise.hints))
    right = SOLVED[slug]
    run_code(page, right.read_text() if right else exercise.solution)
    expect(page.locator(".judgement-block h3")).to_contain_text("passed")
    expect(page.locator(".check-pass").first).to_be_visible()
    expect(page.locator(".check-fail")).to_have_count(0)
    assert errors == [], "\n".join(errors)


@needs_sandbox
def test_a_plausible_wrong_fix_fails_for_the_reason_the_judge_gives(
    page: Page, live_server: str
) -> None:
    """Lowering the rate hides the corrupt batch's jumps on a curve read at a glance, but the
    judge finds the jump coming back at the same place epoch after epoch and says so."""
    wrong = (FIXTURES / "loss_spikes_wrong_labels" / "wrong_lower_rate.py").read_text()
    register(page, live_server, "wrongfixer")
    page.goto(f"{live_server}/exercises/loss-spikes-wrong-labels")
    run_code(page, wrong)
    expect(page.locator(".judgement-block h3")).to_contain_text("failed")
    recurring = page.locator(".check-fail", has_text="no longer jumps at the same place")
    expect(recurring).to_contain_text("at a learning rate of 0.1")
    expect(recurring).to_contain_text("comes back all the same")
    expect(page.locator(".code-diff")).to_have_attribute("open", "")


IN_EDITOR = "document.activeElement.closest('.cm-editor') !== null"


def test_the_editor_lets_the_keyboard_leave_and_resets_to_the_starter(
    page: Page, live_server: str
) -> None:
    exercise = get_exercise(SLUG)
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    register(page, live_server, "keyboarder")
    page.goto(f"{live_server}/exercises/{SLUG}")
    code = page.locator("textarea#code")  # the form's field, which the editor keeps in step
    expect(page.locator(".cm-editor")).to_be_visible()
    expect(page.locator("label[for=code]")).to_contain_text("press Esc, then Tab, to leave")

    # Typed at the end of the file; Tab indents there and the focus stays in the editor.
    page.locator(".cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("# typed by hand")
    expect(code).to_have_value(re.compile("# typed by hand$"))
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    expect(code).to_have_value(re.compile(r"\n\s+# typed by hand$"))
    assert page.evaluate(IN_EDITOR)

    # Esc, then Tab: the focus moves on to the form's buttons, the text unchanged.
    typed = code.input_value()
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert not page.evaluate(IN_EDITOR)
    assert page.evaluate("document.activeElement.closest('.editor-actions') !== null")
    expect(code).to_have_value(typed)

    # Reset asks first: declined, the edits stay; accepted, the starter is back.
    reset = page.get_by_role("button", name="Reset to the starter")
    page.once("dialog", lambda dialog: dialog.dismiss())
    reset.click()
    expect(code).to_have_value(typed)
    page.once("dialog", lambda dialog: dialog.accept())
    reset.click()
    expect(code).to_have_value(exercise.starter)
    expect(page.locator(".cm-content")).not_to_contain_text("# typed by hand")
    assert errors == [], "\n".join(errors)
