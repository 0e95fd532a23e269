"""Static files under content-hashed names, so browsers may keep them for a year.

At start-up every file under static/ gets a second name carrying a digest of its bytes
(`app.css` -> `app.3f2a9c1e0b.css`). Pages link the hashed name (`static_url("app.css")` in a
template); a changed file gets a new name, so a cached copy is never stale and can be marked
`immutable`. The plain name keeps working, but browsers must revalidate it on every use.

The names are computed once per process, at start-up: a file edited while the server runs is
served under its old hashed name until a restart (its content changes, its URL does not), so
restart after editing.
"""

import functools
import hashlib
from pathlib import Path

from starlette.responses import Response
from starlette.staticfiles import StaticFiles
from starlette.types import Scope

from app.core.config import ROOT

IMMUTABLE = "public, max-age=31536000, immutable"
REVALIDATE = "no-cache"  # may be stored, but checked (ETag / Last-Modified) before each use
PREFIX = "/static/"
DIGEST_CHARS = 10


class StaticAssets:
    """The hashed name of every file under a folder, both ways."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.hashed: dict[str, str] = {}  # "vendor/htmx.min.js" -> "vendor/htmx.min.<hash>.js"
        for path in sorted(directory.rglob("*")):
            if path.is_file() and not path.name.startswith("."):
                name = path.relative_to(directory).as_posix()
                self.hashed[name] = _hashed_name(name, path.read_bytes())
        self.original = {hashed: name for name, hashed in self.hashed.items()}

    def url(self, name: str) -> str:
        """The cacheable URL of a file; an unknown name is an error, so a typo fails loudly."""
        try:
            return PREFIX + self.hashed[name]
        except KeyError:
            raise LookupError(f"no static file {name!r} under {self.directory}") from None


@functools.cache
def site_assets() -> StaticAssets:
    """The site's own static files, hashed on first use (create_app asks at start-up)."""
    return StaticAssets(ROOT / "static")


def static_url(name: str) -> str:
    """The Jinja global: `{{ static_url("app.css") }}` -> "/static/app.<hash>.css"."""
    return site_assets().url(name)


def _hashed_name(name: str, content: bytes) -> str:
    digest = hashlib.sha256(content).hexdigest()[:DIGEST_CHARS]
    folder, _, file = name.rpartition("/")
    stem, dot, suffix = file.rpartition(".")
    hashed = f"{stem}.{digest}.{suffix}" if dot and stem else f"{file}.{digest}"
    return f"{folder}/{hashed}" if folder else hashed


class HashedStaticFiles(StaticFiles):
    """Serves a file under its hashed name with a year-long cache, under its plain name with a
    cache that must revalidate. A hashed name this server did not compute is a 404."""

    def __init__(self, assets: StaticAssets) -> None:
        super().__init__(directory=assets.directory)
        self.assets = assets

    async def get_response(self, path: str, scope: Scope) -> Response:
        original = self.assets.original.get(path.replace("\\", "/"))
        response = await super().get_response(original or path, scope)
        if response.status_code in (200, 304):
            response.headers["Cache-Control"] = IMMUTABLE if original else REVALIDATE
        return response
