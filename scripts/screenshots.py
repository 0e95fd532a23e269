"""Screenshots of the drill, attempt, submission and review pages at 390 and 1366 px, and the
width each page takes: a real server (the README's serve path, SQLite, one worker) driven by
Debian's Chromium through a learner's and an instructor's flow.

    .venv/bin/python scripts/screenshots.py OUT_DIR [CHECKOUT]

CHECKOUT (default: this one) is the tree served, so an older commit's worktree can be shot the
same way. Pages are saved as OUT_DIR/<page>-<width>.png.
"""

import os
import re
import subprocess
import sys
import time
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright

PASSWORD = "a long enough password"
WIDTHS = {390: 844, 1366: 768}  # width: viewport height
LISTENING = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")


def serve(root: Path, data: Path) -> tuple[subprocess.Popen[bytes], str]:
    python = str(root / ".venv/bin/python")
    env = os.environ | {
        "DRILLBOOK_DATABASE_URL": f"sqlite:///{data / 'drillbook.sqlite3'}",
        "DRILLBOOK_WORKERS": "1",
        "DRILLBOOK_DATA_DIR": str(data / "data"),
    }
    subprocess.run([python, "-m", "app", "migrate"], cwd=root, env=env, check=True)
    subprocess.run(
        [python, "-m", "app", "create-admin", "root-admin", "--password-stdin"],
        cwd=root,
        env=env,
        input=(PASSWORD + "\n").encode(),
        check=True,
        capture_output=True,
    )
    log = data / "server.log"
    server = subprocess.Popen(
        [python, "-m", "app", "serve", "--port", "0"],
        cwd=root,
        env=env,
        stdout=log.open("w"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 120
    while not (match := LISTENING.search(log.read_text())):
        if server.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(log.read_text())
        time.sleep(0.3)
    return server, match.group(1)


def register(page: Page, url: str, name: str) -> None:
    page.goto(f"{url}/register")
    page.fill("#username", name)
    page.fill("#display_name", name.title())
    page.fill("#password", PASSWORD)
    page.fill("#password_again", PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(f"{url}/progress")


def run_drill(page: Page, url: str, *, bug: str, prediction: str) -> None:
    page.goto(f"{url}/drills/overfit-one-batch")
    page.get_by_label(re.compile("memorises the batch")).check()
    page.fill("#prediction", prediction)
    page.select_option("#knob-bug", bug)
    page.locator("#run-button").click()
    expect(page.locator("#verdict")).to_be_visible(timeout=120_000)


def main() -> None:
    out = Path(sys.argv[1]).resolve()
    root = Path(sys.argv[2]).resolve() if len(sys.argv) > 2 else Path(__file__).parents[1]
    data = out / "server"
    data.mkdir(parents=True, exist_ok=True)
    server, url = serve(root, data)
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(
                executable_path="/usr/bin/chromium", args=["--headless", "--no-sandbox"]
            )

            def person() -> Page:
                return browser.new_context(viewport={"width": 1366, "height": 768}).new_page()

            instructor, admin, learner = person(), person(), person()
            register(instructor, url, "ida")
            admin.goto(f"{url}/login")
            admin.fill("#username", "root-admin")
            admin.fill("#password", PASSWORD)
            admin.get_by_role("button", name="Log in").click()
            admin.goto(f"{url}/admin/users")
            admin.get_by_label("role of ida").select_option("instructor")
            admin.locator("tr", has_text="ida").get_by_role("button", name="Save").click()
            expect(admin.get_by_label("role of ida")).to_have_value("instructor")

            instructor.goto(f"{url}/cohorts")
            instructor.fill("#cohort-name", "Autumn")
            instructor.get_by_role("button", name="Create cohort").click()
            code = instructor.locator("#join-code").inner_text()
            register(learner, url, "lee")
            learner.fill("#join-code", code)
            learner.get_by_role("button", name="Join").click()
            expect(learner.get_by_text("You joined the cohort.")).to_be_visible()
            run_drill(learner, url, bug="shuffled-labels", prediction="It fits anyway.")
            run_drill(learner, url, bug="none", prediction="The loss goes to zero.")
            attempt = learner.locator("#run-panel h2 a").get_attribute("href")
            learner.goto(f"{url}/drills/overfit-one-batch")
            for field, text in {
                "mechanism": "Labels move between examples each step, so *nothing* ties a label "
                "to its input.",
                "right_tool": "Before a long run.",
                "wrong_tool": "To judge generalisation.",
                "next_check": "Print input/label pairs.",
            }.items():
                learner.fill(f"#submit-{field}", text)
            learner.get_by_role("button", name="Submit for review").click()
            learner.wait_for_url(re.compile(r"/submissions/\d+$"))
            submission = learner.url.removeprefix(url)
            pages = {
                "drill": (learner, "/drills/overfit-one-batch"),
                "attempt": (learner, attempt),
                "submission": (learner, submission),
                "review": (instructor, submission),
            }
            for name, (page, path) in pages.items():
                for width, height in WIDTHS.items():
                    page.set_viewport_size({"width": width, "height": height})
                    page.goto(f"{url}{path}")
                    page.wait_for_load_state("networkidle")
                    taken = page.evaluate("document.documentElement.scrollWidth")
                    print(f"{name:<10} at {width:>4} px: {taken} px wide  ({path})")
                    page.screenshot(path=str(out / f"{name}-{width}.png"), full_page=True)
            browser.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


if __name__ == "__main__":
    main()
