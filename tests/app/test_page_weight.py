"""What a page costs to load, counted as a browser receives it (gzip accepted): the page plus
every script and stylesheet it links, bodies as sent and their response headers. Budgets from
issue 12: /login under 50 KB; a drill page under 1.5 MB on a first visit and under 50 KB on a
repeat visit (linked files are cached for a year under content-hashed names, so only the page
itself is fetched again)."""

import gzip
import re
from dataclasses import dataclass

from fastapi.testclient import TestClient

from app.web.static_assets import IMMUTABLE
from drills.core.registry import all_drills

KB = 1000
LINKED = re.compile(r'<(?:script|link)\b[^>]*?\b(?:src|href)="(/static/[^"]+)"')


@dataclass
class Transfer:
    url: str
    size: int  # bytes on the wire: the body as sent (compressed or not) and the headers
    body: bytes  # the body as the browser reads it
    encoding: str | None
    cached_for_good: bool  # a browser keeps it and does not ask for it again


def fetch(client: TestClient, url: str) -> Transfer:
    with client.stream("GET", url, headers={"Accept-Encoding": "gzip"}) as response:
        assert response.status_code == 200, url
        raw = b"".join(response.iter_raw())  # before httpx decompresses anything
        headers = sum(len(name) + len(value) + 4 for name, value in response.headers.raw)
        encoding = response.headers.get("Content-Encoding")
        cached = response.headers.get("Cache-Control") == IMMUTABLE
    body = gzip.decompress(raw) if encoding == "gzip" else raw
    return Transfer(url, len(raw) + headers, body, encoding, cached)


def load(client: TestClient, path: str) -> tuple[Transfer, list[Transfer]]:
    page = fetch(client, path)
    assert page.encoding == "gzip", f"{path} was sent uncompressed"
    linked = [fetch(client, url) for url in LINKED.findall(page.body.decode())]
    assert linked, f"{path} links no script or stylesheet"
    return page, linked


def first_visit(client: TestClient, path: str) -> int:
    page, linked = load(client, path)
    return page.size + sum(item.size for item in linked)


def repeat_visit(client: TestClient, path: str) -> int:
    """The page again, plus (pessimistically, in full) every linked file not cached for good."""
    page, linked = load(client, path)
    return page.size + sum(item.size for item in linked if not item.cached_for_good)


def scripts(client: TestClient, path: str) -> list[str]:
    return re.findall(r'<script\b[^>]*\bsrc="([^"]+)"', client.get(path).text)


def test_the_login_page_stays_light_and_loads_no_charts(anonymous: TestClient) -> None:
    assert first_visit(anonymous, "/login") < 50 * KB
    for path in ("/login", "/register"):
        assert scripts(anonymous, path), path
        assert not [src for src in scripts(anonymous, path) if "plotly" in src], path


def test_every_drill_page_fits_its_budget_first_and_again(client: TestClient) -> None:
    for drill in all_drills():
        path = f"/drills/{drill.slug}"
        assert first_visit(client, path) < 1500 * KB, path
        assert repeat_visit(client, path) < 50 * KB, path


def test_every_file_a_page_links_is_compressed_and_cached_for_good(client: TestClient) -> None:
    for path in ("/", "/progress", "/drills/overfit-one-batch"):
        _, linked = load(client, path)
        assert all(item.cached_for_good for item in linked), [i.url for i in linked]
        assert all(item.encoding == "gzip" for item in linked), [i.url for i in linked]


def test_only_pages_that_draw_charts_load_plotly(client: TestClient) -> None:
    for path in ("/", "/progress", "/cases", "/no-such-page"):
        assert not [src for src in scripts(client, path) if "plotly" in src], path
    assert [src for src in scripts(client, "/drills/overfit-one-batch") if "plotly" in src]
