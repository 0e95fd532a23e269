"""The shell command that replays a run exactly."""

from __future__ import annotations

import shlex
from collections.abc import Mapping


def format_knob_value(value: object) -> str:
    # repr() of a float parses back to the identical float; str() of an int or a choice is exact.
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, list | tuple):  # a float-list knob: "1e-06,0.0001,0.01,1.0"
        return ",".join(format_knob_value(float(item)) for item in value)
    return str(value)


def replay_command(slug: str, knobs: Mapping[str, object], seed: int) -> str:
    parts = ["python", "-m", "drills", "run", slug]
    for name in sorted(knobs):
        parts += ["--set", f"{name}={format_knob_value(knobs[name])}"]
    parts += ["--seed", str(seed)]
    return shlex.join(parts)
