"""No request body over the app's limit, refused in the app's own words.

A body whose Content-Length is over the limit is refused before a byte of it is read; one sent
without (chunked) is refused as soon as what has streamed in passes it, before a handler or the
CSRF check has parsed it. The refusal is the app's own 413 (JSON under /api/, a page elsewhere)
and, since this layer sits inside the others, it carries the security headers and the session
like every response. (FastAPI's own `max_body_size` answered from outside every middleware: a
bare text/plain 413.)
"""

from collections.abc import Awaitable, Callable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from app.core.whole_numbers import whole_number

Refuse = Callable[[Request, Exception], Awaitable[Response]]


class BodyTooLarge(HTTPException):
    """Raised while the body streams in: an HTTPException, so that whatever was reading it (a
    form parser, FastAPI's JSON body) lets it through to the app's error handlers."""

    def __init__(self, max_bytes: int) -> None:
        super().__init__(413, f"The request is larger than {max_bytes / 2**20:g} MB.")


class BodyLimit:
    def __init__(self, app: ASGIApp, *, max_bytes: int, refuse: Refuse) -> None:
        self.app = app
        self.max_bytes = max_bytes
        self.refuse = refuse
        self.error = BodyTooLarge(max_bytes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = whole_number(
            headers.get(b"content-length", b"").decode("latin-1"), maximum=2**63
        )
        if declared is not None and declared > self.max_bytes:
            await self._refused(scope, receive, send)
            return
        received = 0
        started = False

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    raise BodyTooLarge(self.max_bytes)
            return message

        async def noting_start(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, limited, noting_start)
        except BaseException as error:
            if started or not _is_body_too_large(error):
                raise
            await self._refused(scope, receive, send)

    async def _refused(self, scope: Scope, receive: Receive, send: Send) -> None:
        response = await self.refuse(Request(scope, receive), self.error)
        response.headers["Connection"] = "close"  # the rest of the body is not read
        await response(scope, receive, send)


def _is_body_too_large(error: BaseException) -> bool:
    """The limit's own exception, also when a task group wrapped it (with nothing else)."""
    if isinstance(error, BaseExceptionGroup):
        return all(_is_body_too_large(inner) for inner in error.exceptions)
    return isinstance(error, BodyTooLarge)
