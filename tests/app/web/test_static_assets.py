"""Static files under content-hashed names: a year-long cache for the hashed name, revalidation
for the plain one, a 404 for a hash this server never computed; the names are computed once."""

import hashlib
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from app.core.config import ROOT
from app.web.static_assets import IMMUTABLE, REVALIDATE, StaticAssets


def test_a_hashed_name_carries_a_digest_of_the_content(tmp_path: Path) -> None:
    (tmp_path / "vendor").mkdir()
    (tmp_path / "app.css").write_text("body {}")
    (tmp_path / "vendor" / "lib.min.js").write_text("1")
    assets = StaticAssets(tmp_path)
    digest = hashlib.sha256(b"body {}").hexdigest()[:10]
    assert assets.url("app.css") == f"/static/app.{digest}.css"
    assert assets.url("vendor/lib.min.js").startswith("/static/vendor/lib.min.")
    with pytest.raises(LookupError):
        assets.url("missing.css")
    # Computed once: an edit does not move the name of a running server's file...
    (tmp_path / "app.css").write_text("body { color: red }")
    assert assets.url("app.css") == f"/static/app.{digest}.css"
    # ... a restart does.
    assert StaticAssets(tmp_path).url("app.css") != assets.url("app.css")


def test_hashed_names_are_cached_for_good_and_plain_names_revalidate(client: TestClient) -> None:
    url = client.app.state.static_assets.url("app.css")  # type: ignore[attr-defined]
    hashed = client.get(url)
    assert hashed.status_code == 200
    assert hashed.headers["Cache-Control"] == IMMUTABLE
    assert hashed.content == (ROOT / "static" / "app.css").read_bytes()
    plain = client.get("/static/app.css")
    assert plain.status_code == 200 and plain.headers["Cache-Control"] == REVALIDATE
    again = client.get("/static/app.css", headers={"If-None-Match": plain.headers["ETag"]})
    assert again.status_code == 304
    assert "script-src 'self'" in hashed.headers["Content-Security-Policy"]


def test_a_hash_the_server_did_not_compute_is_not_found(client: TestClient) -> None:
    url = client.app.state.static_assets.url("app.js")  # type: ignore[attr-defined]
    stale = url.replace(url.split(".")[-2], "0123456789")
    assert client.get(stale).status_code == 404
    assert "max-age" not in client.get(stale).headers.get("Cache-Control", "")


def test_pages_link_their_files_by_hashed_name(client: TestClient) -> None:
    page = client.get("/drills/overfit-one-batch").text
    assets = client.app.state.static_assets  # type: ignore[attr-defined]
    for name in ("app.css", "app.js", "vendor/htmx.min.js", "vendor/plotly-cartesian.min.js"):
        assert f'"{assets.url(name)}"' in page, name
    assert 'src="/static/app.js"' not in page
