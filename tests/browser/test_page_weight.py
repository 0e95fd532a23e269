"""Page weight as Chromium measures it: the bytes it receives (Network.loadingFinished's
encodedDataLength: compressed bodies and headers, 0 for what its cache served). /login and
pages without charts load no plotly.js and raise no script error; a drill page loads it once,
and a repeat visit fetches little more than the page itself."""

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from playwright.sync_api import Page

from tests.browser.conftest import register

pytestmark = [pytest.mark.browser, pytest.mark.slow]
KB = 1000


@contextmanager
def received(page: Page) -> Iterator[dict[str, Any]]:
    """Bytes received and URLs requested while the block runs."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    urls: dict[str, str] = {}
    seen: dict[str, Any] = {"bytes": 0, "urls": []}

    def sent(event: dict[str, Any]) -> None:
        urls[event["requestId"]] = event["request"]["url"]
        seen["urls"].append(event["request"]["url"])

    def finished(event: dict[str, Any]) -> None:
        seen["bytes"] += event["encodedDataLength"]

    cdp.on("Network.requestWillBeSent", sent)
    cdp.on("Network.loadingFinished", finished)
    try:
        yield seen
    finally:
        cdp.detach()


def test_pages_load_plotly_only_where_they_draw_charts(page: Page, live_server: str) -> None:
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"{page.url}: {error}"))
    with received(page) as login:
        page.goto(f"{live_server}/login", wait_until="networkidle")
    assert login["bytes"] < 50 * KB, login
    assert not [url for url in login["urls"] if "plotly" in url]

    register(page, live_server, "weight-learner")
    for path in ("/", "/cases", "/progress"):
        with received(page) as plain:
            page.goto(live_server + path, wait_until="networkidle")
        assert not [url for url in plain["urls"] if "plotly" in url], path

    drill = f"{live_server}/drills/overfit-one-batch"
    with received(page) as first:
        page.goto(drill, wait_until="networkidle")
    assert [url for url in first["urls"] if re.search(r"/plotly[^/]*\.js$", url)]
    assert page.evaluate("typeof window.Plotly") == "object"
    assert first["bytes"] < 1500 * KB, first["bytes"]

    with received(page) as again:
        page.goto(drill, wait_until="networkidle")
    assert again["bytes"] < 50 * KB, again["bytes"]
    assert errors == []
