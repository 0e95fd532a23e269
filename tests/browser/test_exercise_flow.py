"""A learner opens a code exercise, runs the starter edited, reads the failed checks, climbs the
hint ladder, fixes the file in the editor, passes, and reads the reference's diff: in headless
Chromium against the real server, its worker and the sandbox. And the editor by keyboard: Tab
indents, Esc then Tab leaves it, and Reset brings the starter back."""

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
    for rung in range(1, len(exercise.hints) + 1):
        page.get_by_role("button", name=re.compile(f"Show hint {rung} of")).click()
        expect(page.locator("#hints li")).to_have_count(rung)
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
