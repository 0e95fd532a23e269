"""The reply's wire format, parsed as hostile input (no sandbox needed)."""

from __future__ import annotations

import io
import json
import os

import pytest

from drills.sandbox.channel import (
    HEADER_MAX,
    READY,
    Channel,
    MalformedReply,
    ReplyParser,
    ReplyTooLarge,
    encode_request,
    read_request,
)

DUPLICATE = b'{"frame":{},"frame":{},"blobs":[]}'


def framed(header: object) -> bytes:
    raw = json.dumps(header).encode()
    return len(raw).to_bytes(4, "big") + raw


def parse(data: bytes, budget: int = 2**20) -> list[tuple[dict[str, object], dict[str, bytes]]]:
    parser = ReplyParser(budget)
    frames = list(parser.feed(READY + data))
    parser.finish()
    return frames


def sent(*frames: tuple[dict[str, object], dict[str, bytes] | None]) -> bytes:
    """What Channel.send writes for these frames."""
    read, write = os.pipe()
    try:
        channel = Channel(write)
        for frame, blobs in frames:
            channel.send(frame, blobs)
        os.close(write)
        with os.fdopen(read, "rb") as pipe:
            return pipe.read()
    except BaseException:
        os.close(read)
        raise


def test_frames_and_blobs_come_back_in_order_whatever_the_chunking() -> None:
    data = sent(({"step": 1}, None), ({"step": 2}, {"weights": b"\x00" * 10, "b": b"xy"}))
    whole = parse(data)
    parser = ReplyParser(2**20)
    trickled = [frame for byte in READY + data for frame in parser.feed(bytes([byte]))]
    parser.finish()
    assert (
        whole
        == trickled
        == [({"step": 1}, {}), ({"step": 2}, {"weights": b"\x00" * 10, "b": b"xy"})]
    )


@pytest.mark.parametrize(
    ("data", "complaint"),
    [
        (b"\xff\xff\xff\xff", "header of 4294967295 bytes"),
        (b"\x00\x00\x00\x00", "header of 0 bytes"),
        (b"\x00\x00\x00\x0anot json!!", "not valid JSON"),
        (b"\x00\x00\x00\x02\xff\xfe", "not valid JSON"),
        (framed([1, 2]), "exactly 'frame' and 'blobs'"),
        (framed({"frame": {}, "blobs": [], "extra": 1}), "exactly 'frame' and 'blobs'"),
        (framed({"frame": 1, "blobs": []}), "not an object"),
        (framed({"frame": {}, "blobs": [["w", -1]]}), "not [name, size]"),
        (framed({"frame": {}, "blobs": [["w", True]]}), "not [name, size]"),
        (framed({"frame": {}, "blobs": [["", 1]]}), "not [name, size]"),
        (framed({"frame": {}, "blobs": [["w", 0], ["w", 0]]}), "twice"),
        (len(DUPLICATE).to_bytes(4, "big") + DUPLICATE, "not valid JSON"),
        (framed({"frame": {}, "blobs": [["w", 5]]}) + b"abc", "middle of a frame"),
        (b"\x00\x00", "middle of a frame"),
    ],
)
def test_garbage_is_rejected_with_a_reason(data: bytes, complaint: str) -> None:
    with pytest.raises(MalformedReply, match=complaint.replace("[", r"\[").replace("]", r"\]")):
        parse(data)


def test_nesting_too_deep_to_parse_is_malformed_not_a_crash() -> None:
    deep = b"[" * (HEADER_MAX - 8)
    with pytest.raises(MalformedReply, match="not valid JSON"):
        parse(len(deep).to_bytes(4, "big") + deep, budget=2 * HEADER_MAX)


def test_the_budget_counts_announced_blobs_before_they_arrive() -> None:
    header = framed({"frame": {}, "blobs": [["w", 2**40]]})
    with pytest.raises(ReplyTooLarge):
        parse(header)


def test_the_budget_counts_every_byte() -> None:
    parser = ReplyParser(100)
    assert list(parser.feed(READY)) == []
    with pytest.raises(ReplyTooLarge):
        list(parser.feed(b"\x00\x00\x03\xe8" + b"x" * 97))


def test_frames_before_a_violation_are_still_handed_over() -> None:
    parser = ReplyParser(2**20)
    frames = []
    with pytest.raises(MalformedReply):
        for frame in parser.feed(READY + sent(({"good": 1}, None)) + b"\xff" * 4):
            frames.append(frame)
    assert frames == [({"good": 1}, {})]


def test_something_else_than_ready_first_is_malformed() -> None:
    with pytest.raises(MalformedReply, match="did not signal"):
        list(ReplyParser(100).feed(b"DBRE4DY\n"))


def test_a_request_round_trips_and_only_names_drills_modules() -> None:
    encoded = encode_request("drills.sandbox.testing", {"code": "pass"})
    assert read_request(io.BytesIO(encoded)) == ("drills.sandbox.testing", {"code": "pass"})
    for entry in ("os", "drills", "drills.x.__import__('os')", "drills..x", "drillsx.y", 3):
        with pytest.raises(ValueError):
            encode_request(entry, {})  # type: ignore[arg-type]


def test_a_request_longer_than_it_says_is_read_only_as_far_as_it_says() -> None:
    with pytest.raises(ValueError, match="over"):
        read_request(io.BytesIO((2**31).to_bytes(4, "big") + b"{}"))
    with pytest.raises(ValueError, match="ended early"):
        read_request(io.BytesIO((10).to_bytes(4, "big") + b"{}"))
