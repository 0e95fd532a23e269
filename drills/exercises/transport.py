"""What crosses the sandbox's wall, and how the judge reads it: torch-free.

The sandbox (`drills.sandbox.run`, built separately) runs an entry module's `main(request,
channel)` and hands back a `Finished`: its status, the JSON frames the run sent and any named
binary blobs. Everything in it was in reach of the learner's code, which runs in the same
process as the harness: a frame can be forged, a blob can be anything. So frames are bounded
and validated here (unknown kinds ignored, malformed ones recorded as problems, never raised),
and no check is ever decided from a frame alone.

Frames the harness sends (see drills/exercises/inside.py):
    {"kind": "point", "name": "loss@5 examples", "step": 3, "value": 1.2}     live curve only
    {"kind": "case", "case": 0, "seed": 123}    a run ended; with blobs "weights-0", "values-0"
    {"kind": "value", "case": 0, "name": "result", "value": 0.41, "returned": "float"}
    {"kind": "error", "case": 0 | None, "message": "..."}   the learner's code failed
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

ENTRY = "drills.exercises.inside"  # the module the sandbox runs

MAX_FRAMES = 20_000  # frames read from one run; the rest are ignored
MAX_POINTS = 5_000  # points forwarded to the live curve
MAX_NAME = 80  # characters of a point's or value's name
MAX_STEP = 1_000_000
MAX_MESSAGE = 4_000  # characters kept of an error message
MAX_BLOB = 16 * 1024 * 1024  # bytes of one weights or values blob
EXCERPT = 4_000  # characters kept of stdout and stderr


class Finished(Protocol):
    """What the sandbox hands back (drills.sandbox.Finished has these fields)."""

    @property
    def status(self) -> str: ...  # "ok" | "failed" | "timeout" | "too-much-output" | "unavailable"

    @property
    def exit_code(self) -> int | None: ...

    @property
    def frames(self) -> Sequence[Any]: ...

    @property
    def blobs(self) -> Mapping[str, Any]: ...

    @property
    def stdout(self) -> Any: ...  # str or bytes

    @property
    def stderr(self) -> Any: ...

    @property
    def wall_s(self) -> float: ...

    @property
    def reason(self) -> str | None: ...


class SandboxRun(Protocol):
    """The shape of `drills.sandbox.run` (its `limits` keyword keeps its default here)."""

    def __call__(
        self,
        entry: str,
        request: dict[str, Any],
        *,
        on_frame: Callable[..., None] | None = None,
        pool: Any = None,
    ) -> Finished: ...


class Channel(Protocol):
    """How the entry module talks to the judge from inside the sandbox."""

    def send(self, frame: dict[str, Any], blobs: dict[str, bytes] | None = None) -> None: ...


@dataclass(frozen=True)
class Point:
    name: str
    step: int
    value: float


@dataclass(frozen=True)
class Value:
    case: int
    name: str
    value: float | None
    returned: str  # what the learner's function returned, in words: "float", "Tensor"


@dataclass
class Frames:
    """The frames of one run, validated."""

    points: list[Point] = field(default_factory=list)
    values: list[Value] = field(default_factory=list)
    errors: list[tuple[int | None, str]] = field(default_factory=list)  # (case, message)
    cases_done: set[int] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)  # frames the judge could not read

    def value(self, case: int, name: str) -> Value | None:
        found = [v for v in self.values if v.case == case and v.name == name]
        return found[-1] if found else None  # a value sent twice: the last one counts

    def error_for(self, case: int) -> str | None:
        messages = [message for where, message in self.errors if where in (case, None)]
        return messages[0] if messages else None


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def read_point(frame: object) -> Point | None:
    """A point frame, validated, or None when it is not a readable point."""
    if not isinstance(frame, Mapping) or frame.get("kind") != "point":
        return None
    name, step, value = frame.get("name"), frame.get("step"), frame.get("value")
    if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME or not name.isprintable():
        return None
    if not _is_int(step) or not 0 <= step <= MAX_STEP:  # type: ignore[operator]
        return None
    if not _is_number(value) or not math.isfinite(value):  # type: ignore[arg-type]
        return None
    return Point(name, int(step), float(value))  # type: ignore[arg-type]


def read_frames(frames: Sequence[Any], cases: int) -> Frames:
    """Validate every frame of a run against the protocol above; never raises."""
    read = Frames()
    if len(frames) > MAX_FRAMES:
        read.problems.append(f"the run sent {len(frames)} frames; only {MAX_FRAMES} were read")
    for number, frame in enumerate(frames[:MAX_FRAMES]):
        problem = _read_one(frame, cases, read)
        if problem:
            read.problems.append(f"frame {number}: {problem}")
    return read


def _case(frame: Mapping[str, Any], cases: int, *, optional: bool = False) -> int | None | str:
    case = frame.get("case")
    if case is None and optional:
        return None
    if isinstance(case, int) and not isinstance(case, bool) and 0 <= case < cases:
        return case
    return f"a {frame.get('kind')} frame names no hidden run ({case!r})"


def _read_one(frame: object, cases: int, read: Frames) -> str | None:
    """Add one frame to `read`; the problem with it in words, or None."""
    if not isinstance(frame, Mapping):
        return f"not a JSON object but {type(frame).__name__}"
    kind = frame.get("kind")
    if not isinstance(kind, str):
        return "a frame without a kind"
    if kind == "point":
        point = read_point(frame)
        if point is None:
            return "a point that is not (name, step, finite value)"
        read.points.append(point)
    elif kind == "case":
        case = _case(frame, cases)
        if isinstance(case, str):
            return case
        if case is not None:
            read.cases_done.add(case)
    elif kind == "value":
        case = _case(frame, cases)
        if isinstance(case, str):
            return case
        name, value, returned = frame.get("name"), frame.get("value"), frame.get("returned", "")
        if not isinstance(name, str) or not 0 < len(name) <= MAX_NAME:
            return "a value without a name"
        if value is not None and not (_is_number(value) and math.isfinite(value)):
            return "a value that is neither a finite number nor null"
        if not isinstance(returned, str):
            return "a value whose description is not text"
        number = None if value is None else float(value)
        read.values.append(Value(int(case or 0), name, number, _short(returned, 200)))
    elif kind == "error":
        case = _case(frame, cases, optional=True)
        if isinstance(case, str):
            return case
        message = frame.get("message")
        if not isinstance(message, str):
            return "an error frame without a message"
        read.errors.append((case, _short(message, MAX_MESSAGE)))
    # Any other kind is ignored: it is nobody's business here.
    return None


def excerpt(text: object, limit: int = EXCERPT) -> str:
    """The end of a stream (where a traceback is), as text, at most `limit` characters."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text).decode("utf-8", errors="replace")
    if not isinstance(text, str):
        return ""
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def blob(blobs: Mapping[str, Any], name: str) -> bytes | None:
    """A named blob if it is bytes of a sane size, else None."""
    data = blobs.get(name) if isinstance(blobs, Mapping) else None
    if isinstance(data, bytearray | memoryview):
        data = bytes(data)
    if not isinstance(data, bytes) or len(data) > MAX_BLOB:
        return None
    return data
