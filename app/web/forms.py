"""Reading HTML form posts, with bounds on what one post can make the server hold.

Every form is parsed here, once per request (the CSRF check and the handler share the result): at
most MAX_FIELDS fields and MAX_FILES file, field names of at most MAX_NAME_CHARS, and each value at
most its cap in characters (FIELD_CHARS, else MAX_FIELD_CHARS). A value is refused while it
streams in, as soon as its raw bytes are more than its cap could take in any encoding, so nothing
oversized is ever held whole; the answer is 413 naming the field. The exact count of characters is
checked once decoded. A file (the portfolio upload) is spooled to disk by Starlette and bounded by
the app's body size limit (app/main.py).
"""

from collections.abc import AsyncGenerator
from typing import Annotated
from urllib.parse import unquote_plus

from fastapi import Depends, HTTPException, Request
from starlette.datastructures import FormData, Headers
from starlette.formparsers import FormParser, MultiPartException, MultiPartParser

MAX_FIELDS = 64
MAX_FILES = 1
MAX_NAME_CHARS = 64
# Free text is capped by app/core/limits.py (at most 4,000 characters); this parse bound is far
# above.
MAX_FIELD_CHARS = 20_000
FIELD_CHARS = {
    # Usernames are at most 64 characters (app/models/accounts.py); a little longer still gets the
    # form back with that message, anything far longer is refused here.
    "username": 256,
    "password": 1024,  # longer than any accepted password (app/security/passwords.py)
    "password_again": 1024,
    "csrf_token": 128,
    "code": 64_000,  # an exercise's code (app/exercises/models.py, MAX_CODE)
}
# Raw bytes of one character at most: percent-encoded UTF-8 (%F0%9F%98%80) in a url-encoded body,
# four bytes (UTF-8, UTF-32) in a multipart one.
URLENCODED_BYTES_PER_CHAR = 12
MULTIPART_BYTES_PER_CHAR = 4
MAX_HEADER_BYTES = 1024  # one header of a multipart part

_SCOPE_KEY = "drillbook.form"


class FieldTooLong(Exception):
    def __init__(self, field: str, max_chars: int) -> None:
        super().__init__(field)
        self.field = field
        self.max_chars = max_chars


def max_chars(field: str) -> int:
    return FIELD_CHARS.get(field, MAX_FIELD_CHARS)


class _UrlencodedParser(FormParser):
    def on_field_start(self) -> None:
        super().on_field_start()
        self._name = bytearray()
        self._value_bytes = 0

    def on_field_name(self, data: bytes, start: int, end: int) -> None:
        self._name += data[start:end]
        if len(self._name) > MAX_NAME_CHARS * URLENCODED_BYTES_PER_CHAR:
            raise FieldTooLong("(a field name)", MAX_NAME_CHARS)
        super().on_field_name(data, start, end)

    def on_field_data(self, data: bytes, start: int, end: int) -> None:
        self._value_bytes += end - start
        name = unquote_plus(self._name.decode("latin-1"))
        if self._value_bytes > max_chars(name) * URLENCODED_BYTES_PER_CHAR:
            raise FieldTooLong(name, max_chars(name))
        super().on_field_data(data, start, end)


class _MultipartParser(MultiPartParser):
    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        part = self._current_part
        if part.file is None:
            limit = max_chars(part.field_name)
            if len(part.data) + end - start > limit * MULTIPART_BYTES_PER_CHAR:
                raise FieldTooLong(part.field_name[:MAX_NAME_CHARS], limit)
        super().on_part_data(data, start, end)

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        if len(self._current_partial_header_value) + end - start > MAX_HEADER_BYTES:
            raise MultiPartException("A part's header is too long.")
        super().on_header_value(data, start, end)

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        if len(self._current_partial_header_name) + end - start > MAX_HEADER_BYTES:
            raise MultiPartException("A part's header is too long.")
        super().on_header_field(data, start, end)


async def read_form(request: Request) -> FormData:
    """The request's form, parsed within the bounds above on first use; 413 or 400 if it breaks
    them."""
    cached = request.scope.get(_SCOPE_KEY)
    if isinstance(cached, FormData):
        return cached
    try:
        form = await _parse(request.headers, request.stream())
    except FieldTooLong as error:
        detail = f"The field {error.field!r} is longer than {error.max_chars} characters."
        raise HTTPException(status_code=413, detail=detail) from None
    except MultiPartException as error:
        raise HTTPException(status_code=400, detail=error.message) from None
    for name, value in form.multi_items():
        if len(name) > MAX_NAME_CHARS:
            await form.close()
            raise HTTPException(status_code=413, detail="A field name is too long.")
        if isinstance(value, str) and len(value) > max_chars(name):
            await form.close()
            detail = f"The field {name!r} is longer than {max_chars(name)} characters."
            raise HTTPException(status_code=413, detail=detail)
    request.scope[_SCOPE_KEY] = form
    return form


async def _parse(headers: Headers, stream: AsyncGenerator[bytes, None]) -> FormData:
    content_type = headers.get("content-type", "").split(";")[0].strip().lower()
    limits = {"max_fields": MAX_FIELDS, "max_part_size": MAX_FIELD_CHARS * 16}
    try:
        if content_type == "multipart/form-data":
            parser = _MultipartParser(headers, stream, max_files=MAX_FILES, **limits)
            return await parser.parse()
        if content_type == "application/x-www-form-urlencoded":
            return await _UrlencodedParser(headers, stream, **limits).parse()
        return FormData()
    finally:
        await stream.aclose()


async def close_form(request: Request) -> None:
    """Release a parsed form's spooled files (a refused or finished upload)."""
    form = request.scope.pop(_SCOPE_KEY, None)
    if isinstance(form, FormData):
        await form.close()


async def form_fields(request: Request) -> dict[str, str]:
    form = await read_form(request)
    return {key: value for key, value in form.items() if isinstance(value, str)}


FormDep = Annotated[dict[str, str], Depends(form_fields)]
# The whole form (repeated fields too), parsed on the event loop as it streams in, so that the
# handler itself can be a plain `def`: it runs in the thread pool, where its database work waits
# without holding up every other request.
FormDataDep = Annotated[FormData, Depends(read_form)]


def is_htmx(request: Request) -> bool:
    return request.headers.get("HX-Request") == "true"
