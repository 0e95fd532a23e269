"""Security headers on every response: a Content-Security-Policy that lets pages load scripts,
styles, fonts and data only from this server, no framing, no MIME sniffing, and no full URLs in the
Referer sent to other sites.

Each request gets a fresh style nonce (`request.state.style_nonce`, in every page's context as
`style_nonce`): the code editor (CodeMirror) writes its theme into <style> elements, which it
marks with that nonce (EditorView.cspNonce), so they are allowed and nothing else inline is.

A pure ASGI middleware, not BaseHTTPMiddleware (which buffers and breaks the server-sent event
streams): it only adds headers to the `http.response.start` message. A header a response already
has is kept, such as the stricter policy of the portfolio exports.
"""

import secrets

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

EMPTY_STYLE = "'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='"  # sha256 of ""
PLOTLY_PIXELATED_IMAGE = "'sha256-AR/cKIZjWPcPmBUPDA6oti9XBiTbJvz0Cro2J1VzzS8='"
PLOTLY_MAPLIBRE_STYLE = "'sha256-ji27qzEtxXZW+7dun6UwjHXJ18e6WAin1VvNtkzIE/o='"
CONTENT_SECURITY_POLICY = "; ".join(
    [
        "default-src 'self'",
        "script-src 'self'",
        # plotly.js adds an empty <style> and fills it through the CSSOM (which CSP does not
        # restrict), and injects maplibre's stylesheet (map traces) as a <style> on load: both
        # are allowed by their hashes only (the second is pinned to plotly 7.1.0's bundle; the
        # browser test tests/browser/test_content_security_policy.py fails if it changes).
        f"style-src 'self' {EMPTY_STYLE} {PLOTLY_MAPLIBRE_STYLE} 'nonce-{{nonce}}'",
        # plotly's heat maps set two style attributes: an empty one, and "image-rendering:
        # pixelated" (its several spellings) on the heat map's image. Exactly these two are
        # allowed, by hash; any other style attribute stays blocked.
        f"style-src-attr 'unsafe-hashes' {EMPTY_STYLE} {PLOTLY_PIXELATED_IMAGE}",
        # data: for the empty favicon (<link rel="icon" href="data:,">).
        "img-src 'self' data:",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'self'",
        "form-action 'self'",
        "object-src 'none'",
    ]
)

HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "same-origin",
}
# Production is served over HTTPS only (its cookies are Secure): browsers that have seen it once
# then refuse plain http:// to it for a year, so no first request of a session goes out in clear.
# Subdomains are left out: they may be someone else's.
STRICT_TRANSPORT = "max-age=31536000"


class SecurityHeaders:
    def __init__(self, app: ASGIApp, *, https_only: bool = False) -> None:
        self.app = app
        self.headers = HEADERS | (
            {"Strict-Transport-Security": STRICT_TRANSPORT} if https_only else {}
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        nonce = secrets.token_urlsafe(16)
        scope.setdefault("state", {})["style_nonce"] = nonce

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                headers = MutableHeaders(scope=message)
                for name, value in self.headers.items():
                    if name == "Content-Security-Policy":
                        value = value.replace("{nonce}", nonce)
                    headers.setdefault(name, value)
            await send(message)

        await self.app(scope, receive, send_with_headers)
