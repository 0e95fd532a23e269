"""The heaviest legitimate request, a signed export near the 20 MB upload limit, checked by a real
server (`python -m app serve`, fed by a socket) while its database is write-locked from outside:
the server goes on answering every other request within 100 ms.

Measured against a real server because only there does the difference show: checked in a thread
of the web process, `json.loads` holds the GIL and a page waited 0.18-0.66 s; in the check's own
process, 0.06-0.09 s on a machine at load 8. (A TestClient in the test process saw the check
held on the loop, not the one held by the GIL.)"""

import json
import re
import sqlite3
import threading
import time
import urllib.request
from collections.abc import Iterator
from http.cookiejar import CookieJar
from pathlib import Path

import pytest

from app.portfolio.signing import FORMAT, key_path, load_key, sign
from app.portfolio.xapi import digested
from support.processes import wait_until_answers
from tests.processes import free_port, start, stop

pytestmark = pytest.mark.slow

MAX_WAIT_S = 0.1
BOUNDARY = "drillbook-test-boundary"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    database = tmp_path / "drillbook.sqlite3"
    env = {
        "DRILLBOOK_DATABASE_URL": f"sqlite:///{database}",
        "DRILLBOOK_DATA_DIR": str(tmp_path / "data"),
        "DRILLBOOK_WORKERS": "1",
    }
    migrate = start(["migrate"], tmp_path / "migrate.log", tmp_path, env)
    assert migrate.wait(timeout=120) == 0, (tmp_path / "migrate.log").read_text()
    port = free_port()
    process = start(["serve", "--port", str(port)], tmp_path / "server.log", tmp_path, env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_answers(url, process)
        yield url, tmp_path
    finally:
        stop(process)


def heavy_export(data_dir: Path) -> bytes:
    """A real, intact export near the limit: 1,000 statements of 1,000 curve values each,
    digested and signed with the server's own key (checking it is seconds of CPU)."""
    curve = [round(0.5 + i * 1e-4 + 1 / (i + 3), 12) for i in range(1_000)]
    document = {
        "format": FORMAT,
        "exported_at": "2026-12-03T12:00:00Z",
        "exporter": {"username": "someone"},
        "statements": [digested({"id": f"statement-{n}", "curve": curve}) for n in range(1_000)],
    }
    body = json.dumps(sign(document, load_key(key_path(data_dir)))).encode()
    assert 15_000_000 < len(body) < 20_000_000, len(body)
    return body


def upload_request(url: str, export: bytes) -> tuple[urllib.request.OpenerDirector, bytes]:
    """A browser's session (the page's CSRF token and cookie) and its multipart upload body."""
    browser = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(CookieJar()))
    page = browser.open(f"{url}/portfolio/verify").read().decode()
    token = re.search(r'name="csrf_token" value="([^"]+)"', page)
    assert token is not None
    body = (
        (
            f'--{BOUNDARY}\r\nContent-Disposition: form-data; name="csrf_token"\r\n\r\n'
            f"{token.group(1)}\r\n--{BOUNDARY}\r\n"
            'Content-Disposition: form-data; name="file"; filename="export.json"\r\n'
            "Content-Type: application/json\r\n\r\n"
        ).encode()
        + export
        + f"\r\n--{BOUNDARY}--\r\n".encode()
    )
    return browser, body


def waits_during(url: str, send: "threading.Thread") -> list[float]:
    """How long each small GET waited, one after another, while `send` runs."""
    waits: list[float] = []
    send.start()
    while send.is_alive():
        started = time.monotonic()
        with urllib.request.urlopen(f"{url}/static/app.css", timeout=30) as answer:
            answer.read()
        waits.append(time.monotonic() - started)
        time.sleep(0.02)
    return waits


def test_a_server_checking_the_heaviest_upload_answers_everyone_else_within_100_ms(
    server: tuple[str, Path],
) -> None:
    """The best of three tries: a lone slow answer is the machine (two cores, other tests); a
    check that holds the server is slow in every try."""
    url, folder = server
    browser, body = upload_request(url, heavy_export(folder / "data"))
    worst: list[float] = []
    for _ in range(3):
        answers: list[str] = []

        def verify(answers: list[str] = answers) -> None:
            request = urllib.request.Request(
                f"{url}/portfolio/verify",
                data=body,
                headers={"Content-Type": f"multipart/form-data; boundary={BOUNDARY}"},
            )
            with browser.open(request, timeout=120) as answer:
                answers.append(answer.read().decode())

        outside = sqlite3.connect(folder / "drillbook.sqlite3", isolation_level=None)
        outside.execute("BEGIN IMMEDIATE")  # the database write-locked for the whole check
        try:
            waits = waits_during(url, threading.Thread(target=verify))
        finally:
            outside.execute("COMMIT")
            outside.close()
        assert answers and 'id="verify-intact"' in answers[0]
        assert len(waits) >= 10  # the check lasted long enough to be measured
        worst.append(max(waits))
        if worst[-1] < MAX_WAIT_S:
            break
    assert min(worst) < MAX_WAIT_S, f"a page waited {worst} s while the upload was checked"
