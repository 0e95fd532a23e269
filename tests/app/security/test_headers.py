"""Security headers on every response: pages, partials, the API, errors, static files; a policy a
response sets itself (the portfolio exports') is kept."""

import re

import pytest
from fastapi.testclient import TestClient
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse
from starlette.routing import Route

from app.portfolio.routes import EXPORT_POLICY
from app.security.headers import CONTENT_SECURITY_POLICY, SecurityHeaders
from tests.app.factories import DRILL

POLICY = (
    "default-src 'self'; script-src 'self'; "
    "style-src 'self' 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' "
    "'sha256-ji27qzEtxXZW+7dun6UwjHXJ18e6WAin1VvNtkzIE/o=' 'nonce-{nonce}'; "
    "style-src-attr 'unsafe-hashes' 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=' "
    "'sha256-AR/cKIZjWPcPmBUPDA6oti9XBiTbJvz0Cro2J1VzzS8='; "
    "img-src 'self' data:; "
    "connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; "
    "object-src 'none'"
)


NONCE = re.compile(r"'nonce-([A-Za-z0-9_-]{22})'")


def policy_of(response: object) -> str:
    """The policy with its per-request style nonce written as {nonce}."""
    return NONCE.sub("'nonce-{nonce}'", response.headers["Content-Security-Policy"])  # type: ignore[attr-defined]


def test_each_response_has_a_style_nonce_of_its_own_and_the_page_uses_it(
    client: TestClient,
) -> None:
    nonces = []
    for _ in range(2):
        page = client.get("/exercises/overfit-shuffled-pairs")
        match = NONCE.search(page.headers["Content-Security-Policy"])
        assert match is not None
        nonces.append(match.group(1))
        assert f'data-style-nonce="{match.group(1)}"' in page.text
    assert nonces[0] != nonces[1]


@pytest.mark.parametrize(
    ("path", "status", "htmx"),
    [
        ("/", 200, False),
        (f"/drills/{DRILL}", 200, False),
        (f"/drills/{DRILL}/history", 200, True),
        ("/api/drills", 200, False),
        ("/api/attempts/999999", 404, False),
        ("/no-such-page", 404, False),
        ("/static/app.css", 200, False),
        ("/static/no-such-file.js", 404, False),
    ],
)
def test_every_response_carries_the_security_headers(
    client: TestClient, path: str, status: int, htmx: bool
) -> None:
    response = client.get(path, headers={"HX-Request": "true"} if htmx else {})
    assert response.status_code == status
    assert policy_of(response) == POLICY
    assert response.headers["X-Frame-Options"] == "DENY"
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


def test_a_refused_post_carries_them_too(anonymous: TestClient) -> None:
    refused = anonymous.post("/login", data={"username": "x"})  # no CSRF token
    assert refused.status_code == 403
    assert policy_of(refused) == POLICY


def test_the_portfolio_export_keeps_its_own_stricter_policy(client: TestClient) -> None:
    export = client.get("/portfolio/export.html")
    assert export.status_code == 200
    assert export.headers.get_list("Content-Security-Policy") == [EXPORT_POLICY]
    assert export.headers["X-Frame-Options"] == "DENY"


def test_the_middleware_adds_only_what_a_response_lacks() -> None:
    def own(_: Request) -> PlainTextResponse:
        return PlainTextResponse("x", headers={"Content-Security-Policy": "default-src 'none'"})

    app = SecurityHeaders(Starlette(routes=[Route("/", own)]))
    with TestClient(app) as client:
        response = client.get("/")
    assert response.headers.get_list("Content-Security-Policy") == ["default-src 'none'"]
    assert response.headers["Referrer-Policy"] == "same-origin"
    assert CONTENT_SECURITY_POLICY == POLICY


def test_production_tells_browsers_to_come_back_over_https_only() -> None:
    def page(_: Request) -> PlainTextResponse:
        return PlainTextResponse("x")

    routes = [Route("/", page)]
    with TestClient(SecurityHeaders(Starlette(routes=routes), https_only=True)) as client:
        assert client.get("/").headers["Strict-Transport-Security"] == "max-age=31536000"
    with TestClient(SecurityHeaders(Starlette(routes=routes))) as client:
        assert "Strict-Transport-Security" not in client.get("/").headers
