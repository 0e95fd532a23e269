"""A real server (the README's serve path: migrate, then `python -m app serve` with its embedded
workers) and Debian's headless Chromium driven by Playwright."""

import os
import re
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, BrowserContext, Page, expect, sync_playwright

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
PASSWORD = "a long enough password"
ADMIN = "root-admin"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


# A finished run's panel. Read by its status, not by its class: while htmx settles a swapped-in
# panel it briefly wears the old panel's classes (a live panel looked finished for 20 ms).
FINAL_PANEL = '#run-panel[data-attempt]:not([data-status="queued"]):not([data-status="running"])'


# uvicorn names the port it bound when asked for port 0.
LISTENING = re.compile(r"Uvicorn running on (http://127\.0\.0\.1:\d+)")


@pytest.fixture(scope="session")
def live_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("server")
    env = os.environ | {
        "DRILLBOOK_DATABASE_URL": f"sqlite:///{data / 'drillbook.sqlite3'}",
        "DRILLBOOK_WORKERS": "1",
        "DRILLBOOK_DATA_DIR": str(data / "data"),
    }
    subprocess.run([sys.executable, "-m", "app", "migrate"], cwd=ROOT, env=env, check=True)
    # The first admin comes from the CLI, as the README tells operators.
    subprocess.run(
        [sys.executable, "-m", "app", "create-admin", ADMIN, "--password-stdin"],
        cwd=ROOT,
        env=env,
        input=PASSWORD + "\n",
        text=True,
        check=True,
        capture_output=True,
    )
    log = (data / "server.log").open("w")
    # Port 0: the server binds a port the system chooses and says which (a port picked here and
    # handed over could be taken by another process in between).
    server = subprocess.Popen(
        [sys.executable, "-m", "app", "serve", "--port", "0"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 90
        url = ""
        while not url:
            if match := LISTENING.search((data / "server.log").read_text()):
                url = match.group(1)
            elif server.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError((data / "server.log").read_text())
            else:
                time.sleep(0.3)
        while True:
            try:
                with urllib.request.urlopen(url + "/", timeout=2):
                    break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((data / "server.log").read_text()) from None
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(
            "Debian's chromium is missing: `make test` installs it (apt-get install chromium)"
        )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def new_page(browser: Browser) -> Iterator[Callable[[], Page]]:
    """Pages in separate browser contexts: separate cookies, like separate people."""
    contexts: list[BrowserContext] = []

    def open_page() -> Page:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        contexts.append(context)
        return context.new_page()

    yield open_page
    for context in contexts:
        context.close()


@pytest.fixture
def page(new_page: Callable[[], Page]) -> Page:
    return new_page()


def register(page: Page, base_url: str, username: str) -> None:
    page.goto(f"{base_url}/register")
    page.fill("#username", username)
    page.fill("#display_name", username.replace("-", " ").title())
    page.fill("#password", PASSWORD)
    page.fill("#password_again", PASSWORD)
    page.get_by_role("button", name="Create account").click()
    page.wait_for_url(f"{base_url}/progress")


def log_in(page: Page, base_url: str, username: str, password: str = PASSWORD) -> None:
    page.goto(f"{base_url}/login")
    page.fill("#username", username)
    page.fill("#password", password)
    page.get_by_role("button", name="Log in").click()
    page.wait_for_url(f"{base_url}/")


def case_runs_settled(page: Page) -> None:
    """A case run's final status arrives a moment before the case body refetches itself; a form
    filled in between is replaced by the refetched one. Wait until no run is live."""
    expect(page.locator(".case-run.live")).to_have_count(0, timeout=60_000)
