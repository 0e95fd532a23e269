"""The entry available() runs once: it reports whether the system-call filter is in force, since
a sandbox without it must not count as available."""

from __future__ import annotations

import socket
from typing import Any

from drills.sandbox.channel import Channel


def main(request: dict[str, Any], channel: Channel) -> None:
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        filtered = False
    except PermissionError:
        filtered = True
    channel.send({"probe": "ok", "seccomp": filtered})
