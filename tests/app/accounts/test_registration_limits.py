"""Registration cannot take the server's memory: accounts made per address are counted in the
database like failed logins (a 429 past the limit, before any hashing), and at most two argon2
hashes or checks run at once, however many registrations arrive together."""

import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import psutil
from fastapi.testclient import TestClient
from sqlmodel import Session, func, select

from app.accounts.models import User
from app.core.config import Settings
from app.main import create_app
from app.security import passwords
from tests.app.factories import page_token

PASSWORD = "correct horse battery staple"
SCHOOL = ("198.51.100.7", 50000)


def register(app: Any, username: str, client: tuple[str, int] = SCHOOL) -> Any:
    browser = TestClient(app, client=client)  # the app's lifespan runs in the test's client
    try:
        form = {
            "username": username,
            "display_name": username,
            "password": PASSWORD,
            "password_again": PASSWORD,
            "csrf_token": page_token(browser),
        }
        return browser.post("/register", data=form, follow_redirects=False)
    finally:
        browser.close()


def users(app: Any) -> int:
    with Session(app.state.engine) as session:
        return int(session.exec(select(func.count()).select_from(User)).one())


def test_an_address_past_its_registrations_gets_a_429_and_no_account(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings(registration_client_max=2))
    with TestClient(app):
        assert [register(app, f"pupil-{i}").status_code for i in range(2)] == [303, 303]
        before = users(app)
        refused = register(app, "pupil-3")
        assert refused.status_code == 429
        assert "Too many accounts were made from your network address" in refused.text
        assert int(refused.headers["Retry-After"]) > 0
        assert users(app) == before
        # Another address is not held back.
        assert register(app, "elsewhere", client=("192.0.2.1", 50000)).status_code == 303


def test_at_most_two_hashes_run_at_once(monkeypatch: Any) -> None:
    running, most = 0, 0
    lock = threading.Lock()

    class CountingHasher:
        def hash(self, password: str) -> str:
            nonlocal running, most
            with lock:
                running += 1
                most = max(most, running)
            time.sleep(0.05)
            with lock:
                running -= 1
            return "hashed"

        def verify(self, password: str, password_hash: str) -> bool:
            self.hash(password)
            return False

    monkeypatch.setattr(passwords, "_hasher", CountingHasher())
    with ThreadPoolExecutor(12) as pool:
        list(pool.map(passwords.hash_password, ["x"] * 12))
        list(pool.map(lambda _: passwords.verify_password("x", "h"), range(12)))
    assert most == passwords.ARGON2_AT_ONCE == 2


def test_forty_registrations_at_once_leave_memory_bounded(
    make_settings: Callable[..., Settings], real_password_hashing: None
) -> None:
    """With the real argon2id cost (64 MiB each): 40 at once grew the process by ~2 GB before."""
    app = create_app(make_settings(registration_client_max=1000))
    process = psutil.Process()
    with TestClient(app):
        register(app, "warm-up")  # the first request loads what every later one shares
        baseline = process.memory_info().rss
        peak = baseline
        stop = threading.Event()

        def sample() -> None:
            nonlocal peak
            while not stop.is_set():
                peak = max(peak, process.memory_info().rss)
                time.sleep(0.01)

        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            with ThreadPoolExecutor(40) as pool:
                codes = list(pool.map(lambda i: register(app, f"pupil-{i}").status_code, range(40)))
        finally:
            stop.set()
            sampler.join()
    assert codes == [303] * 40
    grown_mib = (peak - baseline) / 2**20
    assert grown_mib < 400, f"the process grew by {grown_mib:.0f} MiB"
