"""An entry for the sandbox's own tests: runs request["code"] with `channel` and `request` in
scope. It exists so a test can submit any program, hostile ones included; it runs only inside a
sandbox (run("drills.sandbox.testing", {"code": ...})), like any learner's code would."""

from __future__ import annotations

from typing import Any

from drills.sandbox.channel import Channel


def main(request: dict[str, Any], channel: Channel) -> None:
    code = compile(request["code"], "<submitted>", "exec")
    exec(code, {"__name__": "__submitted__", "channel": channel, "request": request})
