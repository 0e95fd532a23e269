"""Accounts: the session cookie, sessions renewed at login and cleared at logout, login
throttling, registration, and the operator CLI."""

import html
import os
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import pytest
from fastapi import FastAPI
from fastapi.testclient import TestClient
from pydantic import ValidationError
from sqlmodel import Session, select
from starlette.middleware.sessions import SessionMiddleware

from app.accounts.models import User
from app.accounts.service import set_password
from app.core.config import ROOT, Settings
from app.core.migrate import upgrade
from app.main import create_app
from app.security import passwords
from app.security.models import LoginFailure
from app.security.throttle import LoginThrottle
from tests.app.factories import DRILL, add_user, engine_of, page_token, snapshot, visitor
from tests.conftest import PASSWORD

COOKIE = "drillbook_session"


def post_login(client: TestClient, username: str, password: str) -> Any:
    """The login form as a browser sends it: the page's token in the csrf_token field."""
    client.headers.pop("X-CSRF-Token", None)
    token = page_token(client)
    return client.post(
        "/login",
        data={"username": username, "password": password, "csrf_token": token},
        follow_redirects=False,
    )


def session_cookie_header(response: Any) -> str:
    cookies: list[str] = [v for k, v in response.headers.multi_items() if k.lower() == "set-cookie"]
    ours = [cookie for cookie in cookies if cookie.startswith(f"{COOKIE}=")]
    assert len(ours) == 1, cookies
    return ours[0]


def flags(cookie: str) -> set[str]:
    return {part.strip().lower() for part in cookie.split(";")[1:]}


def session_middleware(app: Any) -> dict[str, Any]:
    [middleware] = [m for m in app.user_middleware if m.cls is SessionMiddleware]
    return dict(middleware.kwargs)


# -- the session cookie --------------------------------------------------------------------------
def test_the_session_cookie_is_httponly_lax_and_secure_outside_local_development(
    anonymous: TestClient, database_url: str
) -> None:
    add_user(engine_of(anonymous), "learner-a")
    cookie = session_cookie_header(post_login(anonymous, "learner-a", PASSWORD))
    assert {"httponly", "samesite=lax"} <= flags(cookie)
    assert "secure" not in flags(cookie)  # local development and tests run on plain http
    assert session_middleware(anonymous.app)["https_only"] is False
    assert session_middleware(anonymous.app)["same_site"] == "lax"

    for environment in ("dev", "test"):
        assert Settings(environment=environment, database_url=database_url).secure_cookies is False
    assert "Strict-Transport-Security" not in anonymous.get("/login").headers
    prod = Settings(
        environment="prod", secret_key="a-real-key-" + "k" * 32, database_url=database_url
    )  # no scheduler address: an embedded cluster
    assert prod.secure_cookies is True
    prod_app = create_app(prod)
    try:
        assert session_middleware(prod_app)["https_only"] is True
        # The cookie a production server sets (no lifespan needed for the login page).
        browser = TestClient(prod_app, base_url="https://testserver")
        page = browser.get("/login")
        cookie = session_cookie_header(page)  # the page makes a CSRF token
        assert {"httponly", "samesite=lax", "secure"} <= flags(cookie)
        assert page.headers["Strict-Transport-Security"] == "max-age=31536000"
        browser.close()
    finally:
        prod_app.state.engine.dispose()
    # Production refuses to run with a key nobody chose, or one short enough to guess.
    with pytest.raises(ValidationError):
        Settings(environment="prod", database_url=database_url)
    with pytest.raises(ValidationError, match="at least 32 characters"):
        Settings(environment="prod", secret_key="x", database_url=database_url)


def test_login_starts_a_new_session(anonymous: TestClient) -> None:
    engine = engine_of(anonymous)
    add_user(engine, "learner-a")
    before_token = page_token(anonymous)
    before_cookie = anonymous.cookies[COOKIE]
    response = post_login(anonymous, "learner-a", PASSWORD)
    assert response.status_code == 303
    after_cookie = anonymous.cookies[COOKIE]
    after_token = anonymous.get("/api/session").json()["csrf_token"]
    assert after_cookie != before_cookie
    assert after_token != before_token
    # The token from before the login no longer works; the new one does.
    rows = snapshot(engine)
    stale = anonymous.post(
        "/cohorts/join",
        data={"code": "NOSUCH22"},
        headers={"X-CSRF-Token": before_token},
        follow_redirects=False,
    )
    assert stale.status_code == 403
    fresh = anonymous.post(
        "/cohorts/join",
        data={"code": "NOSUCH22"},
        headers={"X-CSRF-Token": after_token},
        follow_redirects=False,
    )
    assert fresh.status_code == 303 and fresh.headers["location"] == "/progress?join=unknown"
    assert snapshot(engine) == rows


def test_logout_clears_the_session(anonymous: TestClient) -> None:
    add_user(engine_of(anonymous), "learner-a")
    assert post_login(anonymous, "learner-a", PASSWORD).status_code == 303
    token = anonymous.get("/api/session").json()["csrf_token"]
    out = anonymous.post("/logout", headers={"X-CSRF-Token": token}, follow_redirects=False)
    assert out.status_code == 303
    progress = anonymous.get("/progress", follow_redirects=False)
    assert progress.status_code == 303
    assert progress.headers["location"].startswith("/login")
    assert anonymous.get("/api/session").status_code == 401
    # The old token died with the session: it cannot even be used to log in again.
    again = anonymous.post(
        "/login",
        data={"username": "learner-a", "password": PASSWORD, "csrf_token": token},
        follow_redirects=False,
    )
    assert again.status_code == 403
    assert anonymous.get("/api/session").status_code == 401


def test_a_cookie_copied_before_logout_is_dead_after_it(anonymous: TestClient) -> None:
    add_user(engine_of(anonymous), "learner-a")
    assert post_login(anonymous, "learner-a", PASSWORD).status_code == 303
    thief = TestClient(anonymous.app)
    thief.cookies.update(anonymous.cookies)
    assert thief.get("/api/session").status_code == 200  # a stolen cookie works... until
    token = anonymous.get("/api/session").json()["csrf_token"]
    anonymous.post("/logout", headers={"X-CSRF-Token": token}, follow_redirects=False)
    assert thief.get("/api/session").status_code == 401  # ...the owner logs out


def test_a_new_password_logs_every_browser_out(anonymous: TestClient) -> None:
    user = add_user(engine_of(anonymous), "learner-a")
    assert post_login(anonymous, "learner-a", PASSWORD).status_code == 303
    with Session(engine_of(anonymous)) as session:
        account = session.get(User, user)
        assert account is not None
        set_password(session, user=account, password="a brand new passphrase")
    assert anonymous.get("/api/session").status_code == 401


@pytest.mark.parametrize(
    "target",
    [
        "//evil.example/",
        "https://evil.example/",
        "/\\evil.example/",  # browsers read a backslash as a slash: //evil.example/
        "/\\/evil.example/",
        "/\t/evil.example/",
        "javascript:alert(1)",
    ],
)
def test_login_redirects_only_within_the_site(anonymous: TestClient, target: str) -> None:
    add_user(engine_of(anonymous), "learner-a")
    anonymous.get("/login", params={"next": target})
    token = page_token(anonymous)
    response = anonymous.post(
        "/login",
        data={"username": "learner-a", "password": PASSWORD, "csrf_token": token, "next": target},
        follow_redirects=False,
    )
    assert response.status_code == 303
    location = response.headers["location"]
    # Resolve it the way a browser does (WHATWG URL: "\\" is "/", tabs and newlines vanish).
    as_browser = "".join(ch for ch in location if ch not in "\t\n\r").replace("\\", "/")
    resolved = urlsplit(urljoin("https://drillbook.example/login", as_browser))
    assert (resolved.scheme, resolved.netloc) == ("https", "drillbook.example"), location


# -- throttling ----------------------------------------------------------------------------------
ATTACKER = ("203.0.113.9", 40000)
LEARNER = ("198.51.100.7", 40000)
WRONG = "wrong password!"


class FrozenClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now


def with_clock(app: FastAPI, clock: FrozenClock) -> FastAPI:
    configured: LoginThrottle = app.state.login_throttle
    app.state.login_throttle = LoginThrottle(
        per_name=configured.per_name, per_client=configured.per_client, clock=clock
    )
    return app


def test_logins_are_throttled_after_repeated_failures(
    make_settings: Callable[..., Settings],
) -> None:
    clock = FrozenClock()
    app = with_clock(create_app(make_settings(login_max_failures=3, login_window_s=60)), clock)
    with TestClient(app, client=ATTACKER) as browser:
        add_user(engine_of(browser), "learner-a")
        add_user(engine_of(browser), "learner-b")
        for _ in range(3):
            assert post_login(browser, "learner-a", WRONG).status_code == 401
        blocked = post_login(browser, "learner-a", PASSWORD)
        assert blocked.status_code == 429
        assert "Too many failed logins for this account" in blocked.text
        assert blocked.headers["Retry-After"] == "60"
        assert browser.get("/api/session").status_code == 401
        # The count is per account, whatever the case of the name typed.
        assert post_login(browser, "LEARNER-A", PASSWORD).status_code == 429
        # Other accounts are not locked for this address.
        assert post_login(browser, "learner-b", PASSWORD).status_code == 303
        # After the window the right password works again.
        clock.now += timedelta(seconds=60)
        assert post_login(browser, "learner-a", PASSWORD).status_code == 303
        assert browser.get("/api/session").json()["username"] == "learner-a"


def test_an_attacker_cannot_lock_the_learner_out(make_settings: Callable[..., Settings]) -> None:
    app = create_app(make_settings(login_max_failures=3))
    with TestClient(app, client=ATTACKER) as attacker:
        add_user(engine_of(attacker), "learner-a")
        for _ in range(5):
            post_login(attacker, "learner-a", WRONG)
        assert post_login(attacker, "learner-a", PASSWORD).status_code == 429
        # The learner's own machine took no part in the failures: the right password logs in.
        learner = TestClient(app, client=LEARNER)
        assert post_login(learner, "learner-a", PASSWORD).status_code == 303
        assert learner.get("/api/session").json()["username"] == "learner-a"
        # The attacker's address stays locked out of that account.
        assert post_login(attacker, "learner-a", PASSWORD).status_code == 429
        learner.close()


def test_a_spray_over_many_names_from_one_address_gets_429(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings(login_client_max_failures=8, login_client_window_s=60))
    with TestClient(app, client=ATTACKER) as attacker:
        add_user(engine_of(attacker), "learner-a")
        for i in range(8):
            assert post_login(attacker, f"name-{i}", WRONG).status_code == 401
        blocked = post_login(attacker, "learner-a", PASSWORD)
        assert blocked.status_code == 429
        assert "Too many failed logins from your network address" in blocked.text
        assert 1 <= int(blocked.headers["Retry-After"]) <= 60
        learner = TestClient(app, client=LEARNER)
        assert post_login(learner, "learner-a", PASSWORD).status_code == 303
        learner.close()


def test_the_counts_survive_a_restart(make_settings: Callable[..., Settings]) -> None:
    settings = make_settings(login_max_failures=3)
    with TestClient(create_app(settings), client=ATTACKER) as before:
        add_user(engine_of(before), "learner-a")
        for _ in range(3):
            assert post_login(before, "learner-a", WRONG).status_code == 401
    with TestClient(create_app(settings), client=ATTACKER) as after:
        assert post_login(after, "learner-a", PASSWORD).status_code == 429


def test_huge_usernames_are_refused_and_nothing_of_them_is_kept(
    make_settings: Callable[..., Settings],
) -> None:
    app = create_app(make_settings(login_client_max_failures=1000))
    with TestClient(app, client=ATTACKER) as attacker:
        token = page_token(attacker)
        for i in range(100):
            huge = f"huge{i:03d}-" + "u" * 1_000_000
            form = {"username": huge, "password": WRONG, "csrf_token": token}
            refused = attacker.post("/login", data=form)
            assert refused.status_code == 413
            assert "The field &#39;username&#39; is longer than 256 characters." in refused.text
        # The longest name the form takes is counted by its hash alone.
        for i in range(100):
            longest = f"long{i:03d}-" + "n" * 56
            assert post_login(attacker, longest, WRONG).status_code == 401
        engine = engine_of(attacker)
        with Session(engine) as session:
            rows = session.exec(select(LoginFailure)).all()
        assert len(rows) == 300  # client, name, and name from that client: 3 per failure
        assert all(len(row.key_hash) == 64 for row in rows)
    raws = ("huge0", "long0", "uuuuuuuu", "nnnnnnnn", ATTACKER[0])
    every_row = repr(snapshot(engine_of(attacker)))  # every row of every table
    assert not [raw for raw in raws if raw in every_row]
    sqlite_file = app.state.settings.sqlite_path
    if sqlite_file is not None:  # not even in freed pages or the write-ahead log
        stored = b"".join(path.read_bytes() for path in sqlite_file.parent.glob("drillbook*"))
        assert not [raw for raw in raws if raw.encode() in stored]


# -- registration --------------------------------------------------------------------------------
REGISTRATION = {
    "username": "newcomer",
    "display_name": "New Comer",
    "password": PASSWORD,
    "password_again": PASSWORD,
}


REJECTED = [
    ({"password": "short", "password_again": "short"}, "use at least 10 characters"),
    ({"password": "x" * 257, "password_again": "x" * 257}, "use at most 256 characters"),
    ({"password_again": PASSWORD + "!"}, "the two passwords differ"),
    ({"username": "learner-a"}, "the username 'learner-a' is taken"),
    ({"username": " Learner-A "}, "the username 'learner-a' is taken"),
    ({"username": "ab"}, "use 3-32 lower-case letters, digits, dots, dashes or underscores"),
    ({"username": "bad name!"}, "use 3-32 lower-case letters"),
    ({"username": "<script>"}, "use 3-32 lower-case letters"),
    ({"username": "-leading"}, "use 3-32 lower-case letters"),
    ({"display_name": "n" * 121}, "use at most 120 characters"),
]


def test_a_rejected_registration_says_why_and_stores_nothing(anonymous: TestClient) -> None:
    engine = engine_of(anonymous)
    add_user(engine, "learner-a")
    rows = snapshot(engine)
    token = page_token(anonymous)
    wrong: list[str] = []
    for fields, message in REJECTED:
        response = anonymous.post(
            "/register", data=REGISTRATION | fields | {"csrf_token": token}, follow_redirects=False
        )
        if response.status_code != 422 or message not in html.unescape(response.text):
            wrong.append(f"{fields}: {response.status_code}, expected 422 saying {message!r}")
    assert not wrong, "\n".join(wrong)
    assert snapshot(engine) == rows
    assert anonymous.get("/api/session").status_code == 401


def test_registering_logs_the_new_learner_in(
    anonymous: TestClient, real_password_hashing: None
) -> None:
    browser = visitor(anonymous.app)  # type: ignore[arg-type]
    token = browser.headers["X-CSRF-Token"]
    response = browser.post(
        "/register",
        # A form cannot choose its own role.
        data=REGISTRATION | {"username": "NewComer", "role": "admin", "csrf_token": token},
        follow_redirects=False,
    )
    assert response.status_code == 303 and response.headers["location"] == "/progress"
    session = browser.get("/api/session").json()
    assert session["username"] == "newcomer" and session["role"] == "learner"
    assert session["csrf_token"] != token  # a new session
    assert browser.get("/progress").status_code == 200
    browser.close()
    # The password is stored hashed, and logs in.
    with Session(engine_of(anonymous)) as db:
        user = db.exec(select(User).where(User.username == "newcomer")).one()
    # argon2id with pwdlib's recommended cost (64 MiB, 3 passes, 4 lanes), not the tests' cheap one.
    recommended = "$argon2id$v=19$m=65536,t=3,p=4$"
    assert user.password_hash and user.password_hash.startswith(recommended)
    # An unknown username is verified against a hash of the same cost (no timing oracle).
    assert passwords._DUMMY_HASH.startswith(recommended)
    assert PASSWORD not in user.password_hash
    assert post_login(anonymous, "newcomer", PASSWORD).status_code == 303


# -- the operator CLI ----------------------------------------------------------------------------
def cli(database_url: str, *args: str, password: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("DRILLBOOK_")}
    env |= {"DRILLBOOK_DATABASE_URL": database_url, "DRILLBOOK_ENVIRONMENT": "test"}
    return subprocess.run(
        [sys.executable, "-m", "app", *args, "--password-stdin"],
        input=password + "\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=60,
        check=False,
    )


def test_create_admin_makes_an_admin_who_can_log_in(
    anonymous: TestClient, database_url: str
) -> None:
    assert post_login(anonymous, "boss", PASSWORD).status_code == 401
    done = cli(database_url, "create-admin", "boss", password=PASSWORD)
    assert done.returncode == 0, done.stderr
    assert "created admin 'boss'" in done.stdout
    assert post_login(anonymous, "boss", PASSWORD).status_code == 303
    anonymous.headers["X-CSRF-Token"] = anonymous.get("/api/session").json()["csrf_token"]
    assert anonymous.get("/api/session").json()["role"] == "admin"
    assert anonymous.get("/admin/users").status_code == 200


def test_set_password_lets_the_local_learner_log_in_and_see_its_old_attempts(
    make_settings: Callable[..., Settings], tmp_path: Path
) -> None:
    # A database from before accounts existed, with one attempt by the local learner.
    path = tmp_path / "skeleton.sqlite3"
    url = f"sqlite:///{path}"
    upgrade(url, "0002")
    with sqlite3.connect(path) as db:
        db.execute(
            "insert into attempt (learner_id, drill_slug, drill_version, hypothesis,"
            " prediction_text, predicted_at, knobs, seed, command, status, created_at)"
            " values (1, ?, '1', 'fits', 'zero', '2026-01-01', '{}', 3,"
            " 'python -m drills run overfit-one-batch --seed 3', 'succeeded', '2026-01-01')",
            (DRILL,),
        )
        [(attempt_id,)] = db.execute("select id from attempt").fetchall()
    upgrade(url)
    with TestClient(create_app(make_settings(database_url=url))) as browser:
        # No password yet: the account cannot log in.
        assert post_login(browser, "local-learner", PASSWORD).status_code == 401
        done = cli(url, "set-password", "local-learner", password=PASSWORD)
        assert done.returncode == 0, done.stderr
        assert post_login(browser, "local-learner", PASSWORD).status_code == 303
        session = browser.get("/api/session").json()
        assert (session["user_id"], session["role"]) == (1, "learner")
        assert browser.get(f"/api/attempts/{attempt_id}").status_code == 200
        history = browser.get(f"/drills/{DRILL}/history").text
        assert f'href="/attempts/{attempt_id}"' in history
        assert browser.get(f"/attempts/{attempt_id}").status_code == 200


def test_an_oversized_body_is_refused_while_it_streams(anonymous: TestClient) -> None:
    def chunks() -> Any:
        for _ in range(30):
            yield b"x" * (1024 * 1024)

    response = anonymous.post(
        "/login", content=chunks(), headers={"Content-Type": "application/x-www-form-urlencoded"}
    )
    assert response.status_code == 413
    assert "larger than 24 MB" in response.text
    assert response.headers["Content-Security-Policy"]  # the app's answer, not a bare one


def test_an_oversized_body_is_refused_in_the_apps_own_words(client: TestClient) -> None:
    body = b"x" * (24 * 1024 * 1024 + 1)  # declared by its Content-Length
    api = client.post("/api/attempts", content=body, headers={"Content-Type": "application/json"})
    assert api.status_code == 413
    assert api.json() == {"detail": "The request is larger than 24 MB."}
    assert api.headers["X-Content-Type-Options"] == "nosniff"
    page = client.post("/drills/overfit-one-batch/attempts", content=body)
    assert page.status_code == 413 and page.headers["content-type"].startswith("text/html")
    assert "larger than 24 MB" in page.text and page.headers["Content-Security-Policy"]
