"""The sandbox's wire format: one request in on stdin, frames out on a separate reply pipe.

    request  4-byte big-endian length, then UTF-8 JSON {"entry": "drills.…", "payload": {…}}
    ready    READY, 8 bytes on the reply pipe, once the preload is imported (before the request)
    frame    4-byte big-endian length of a header, the header as UTF-8 JSON
             {"frame": {…}, "blobs": [[name, size], …]}, then each blob's bytes in that order

The reply pipe is not stdout, so nothing the code prints can be mistaken for a frame. The outer
side treats the reply as hostile: a header is at most HEADER_MAX bytes of JSON (parsing a bounded
string is bounded work; nesting too deep fails as RecursionError), it is validated field by
field, the whole reply is held to the caller's byte budget before it is buffered, and nothing is
ever unpickled or evaluated.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Iterator
from typing import Any, BinaryIO

READY = b"DBREADY\n"
HEADER_MAX = 2**20
REQUEST_MAX = 16 * 2**20
BLOB_NAME_MAX = 200
# Only modules of the drills package may be entries: the request names code we ship, never a
# path or an arbitrary module (`os`, `runpy`).
ENTRY_PATTERN = re.compile(r"drills(\.[A-Za-z_][A-Za-z0-9_]*)+\Z")


class MalformedReply(Exception):
    """The reply broke the wire format; the message finishes "sent a malformed reply: …"."""


class ReplyTooLarge(Exception):
    """The reply went over its byte budget."""


def check_entry(entry: object) -> str:
    if not isinstance(entry, str) or not ENTRY_PATTERN.match(entry):
        raise ValueError(f"an entry must be a module under drills., not {entry!r}")
    return entry


def encode_request(entry: str, payload: dict[str, Any]) -> bytes:
    body = json.dumps({"entry": check_entry(entry), "payload": payload}).encode()
    if len(body) > REQUEST_MAX:
        raise ValueError(f"a request is at most {REQUEST_MAX} bytes, this one is {len(body)}")
    return len(body).to_bytes(4, "big") + body


def read_request(stream: BinaryIO) -> tuple[str, dict[str, Any]]:
    """Read the one request (inside the sandbox). Raises ValueError for anything malformed."""
    size = int.from_bytes(_read_exactly(stream, 4), "big")
    if size > REQUEST_MAX:
        raise ValueError(f"request of {size} bytes is over {REQUEST_MAX}")
    request = json.loads(_read_exactly(stream, size))
    if not isinstance(request, dict) or not isinstance(request.get("payload"), dict):
        raise ValueError("a request is {'entry': ..., 'payload': {...}}")
    return check_entry(request.get("entry")), request["payload"]


def _read_exactly(stream: BinaryIO, size: int) -> bytes:
    data = stream.read(size)
    if len(data) != size:
        raise ValueError("the request ended early")
    return data


class Channel:
    """Given to the entry inside the sandbox: send(frame, blobs) writes one frame to the reply
    pipe. Thread-safe, so frames from several threads do not interleave."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._lock = threading.Lock()

    @property
    def fd(self) -> int:
        return self._fd

    def send(self, frame: dict[str, Any], blobs: dict[str, bytes] | None = None) -> None:
        if not isinstance(frame, dict):
            raise TypeError(f"a frame is a dict, not {type(frame).__name__}")
        parts = list((blobs or {}).items())
        for name, data in parts:
            if not isinstance(name, str) or not 0 < len(name) <= BLOB_NAME_MAX:
                raise ValueError(f"a blob's name is a str of 1 to {BLOB_NAME_MAX} characters")
            if not isinstance(data, bytes | bytearray | memoryview):
                raise TypeError(f"blob {name!r} is {type(data).__name__}, not bytes")
        header = json.dumps(
            {"frame": frame, "blobs": [[name, len(data)] for name, data in parts]},
            separators=(",", ":"),
        ).encode()
        if len(header) > HEADER_MAX:
            raise ValueError(f"a frame is at most {HEADER_MAX} bytes of JSON: send bulk as a blob")
        with self._lock:
            _write_all(self._fd, [len(header).to_bytes(4, "big"), header, *(d for _, d in parts)])


def _write_all(fd: int, chunks: Iterable[bytes | bytearray | memoryview]) -> None:
    for chunk in chunks:
        view = memoryview(chunk).cast("B")
        while view:
            view = view[os.write(fd, view) :]


Frame = tuple[dict[str, Any], dict[str, bytes]]


class ReplyParser:
    """Reads the reply pipe's bytes as they come (outside) and hands back whole frames.

    feed() raises MalformedReply or ReplyTooLarge; after that the reply is not read further.
    It buffers at most the budget (a frame's bytes until it is whole)."""

    def __init__(self, budget: int, *, ready: bool = False) -> None:
        self._budget = budget
        self._buffer = bytearray()
        self._received = 0
        self._consumed = 0
        # Whether READY was read already (a warm sandbox's, by the reader that waited for it).
        self._ready = ready
        self._pending: tuple[dict[str, Any], list[tuple[str, int]]] | None = None
        self._blob_names: set[str] = set()

    @property
    def ready(self) -> bool:
        return self._ready

    def feed(self, data: bytes) -> Iterator[Frame]:
        """Take the next bytes read; yield each frame they complete. Frames before a violation
        are yielded before it is raised."""
        if not self._ready:
            # READY is written by our own code before any submitted code runs; it is not part of
            # the entry's budget.
            take = min(len(data), len(READY) - len(self._buffer))
            self._buffer += data[:take]
            data = data[take:]
            if bytes(self._buffer) != READY[: len(self._buffer)]:
                raise MalformedReply("the sandbox did not signal that it started")
            if len(self._buffer) < len(READY):
                return
            self._ready = True
            self._buffer.clear()
        room = max(0, self._budget - self._received)
        self._received += len(data)
        self._buffer += data[:room]
        yield from self._frames()
        if self._received > self._budget:
            raise ReplyTooLarge

    def finish(self) -> None:
        """The pipe closed: a frame cut short is malformed."""
        if self._buffer or self._pending is not None:
            raise MalformedReply("the reply ended in the middle of a frame")

    def _frames(self) -> Iterator[Frame]:
        while True:
            if self._pending is None:
                if len(self._buffer) < 4:
                    return
                size = int.from_bytes(self._buffer[:4], "big")
                if not 0 < size <= HEADER_MAX:
                    raise MalformedReply(f"a frame header of {size} bytes")
                if len(self._buffer) < 4 + size:
                    return
                self._pending = self._header(bytes(self._buffer[4 : 4 + size]))
                del self._buffer[: 4 + size]
                self._consumed += 4 + size
                # Announced sizes count against the budget now, so a lying header cannot make us
                # wait for (or buffer) more than the budget allows.
                if self._consumed + sum(size for _, size in self._pending[1]) > self._budget:
                    raise ReplyTooLarge
            frame, sizes = self._pending
            if len(self._buffer) < sum(size for _, size in sizes):
                return
            blobs: dict[str, bytes] = {}
            for name, size in sizes:
                blobs[name] = bytes(self._buffer[:size])
                del self._buffer[:size]
                self._consumed += size
            self._pending = None
            yield frame, blobs

    def _header(self, raw: bytes) -> tuple[dict[str, Any], list[tuple[str, int]]]:
        try:
            header = json.loads(raw.decode("utf-8"), object_pairs_hook=_unique_keys)
        except (UnicodeDecodeError, ValueError, RecursionError) as error:
            raise MalformedReply("a frame that is not valid JSON") from error
        if not isinstance(header, dict) or set(header) != {"frame", "blobs"}:
            raise MalformedReply("a frame header without exactly 'frame' and 'blobs'")
        frame, listed = header["frame"], header["blobs"]
        if not isinstance(frame, dict) or not isinstance(listed, list):
            raise MalformedReply("a frame that is not an object, or blobs that are not a list")
        sizes: list[tuple[str, int]] = []
        for item in listed:
            if not (
                isinstance(item, list)
                and len(item) == 2
                and isinstance(item[0], str)
                and 0 < len(item[0]) <= BLOB_NAME_MAX
                and type(item[1]) is int
                and item[1] >= 0
            ):
                raise MalformedReply("a blob entry that is not [name, size]")
            if item[0] in self._blob_names:
                raise MalformedReply(f"the blob name {item[0][:40]!r} twice")
            self._blob_names.add(item[0])
            sizes.append((item[0], item[1]))
        return frame, sizes


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise ValueError("duplicate key")
    return result
