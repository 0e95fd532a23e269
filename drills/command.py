"""The shell command that replays a run exactly."""

from __future__ import annotations

import shlex
from collections.abc import Mapping


def format_knob_value(value: object) -> str:
    # repr() of a float parses back to the identical float; str() of an int or a choice is exact.
    if isinstance(value, float):
        return repr(value)
    return str(value)


def replay_command(slug: str, knobs: Mapping[str, object], seed: int) -> str:
    parts = ["python", "-m", "drills", "run", slug]
    for name in sorted(knobs):
        parts += ["--set", f"{name}={format_knob_value(knobs[name])}"]
    parts += ["--seed", str(seed)]
    return shlex.join(parts)
