"""The code-exercise contract: what an exercise is, what one check found, what a submission got.

Torch-free: the web process imports it to list exercises and show their stories and starters.

An exercise hands the learner a story and a small PyTorch file (`starter`) with a bug in it, or
with a function left to write. The learner's file runs in a sandbox on hidden seeds; the judge
decides from what it measures outside the sandbox, never from what the learner's code reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from drills.core.contract import SignatureValue

CheckStatus = Literal["pass", "fail", "error"]
JudgementStatus = Literal["passed", "failed", "error", "not-attempted"]


@dataclass(frozen=True)
class CheckSpec:
    """One hidden check, as listed before a run: what it asks of the code, never how it asks."""

    key: str  # stable identifier, e.g. "fits-5"
    title: str  # one line: "The loss on a batch of 5 examples goes to about zero"


@dataclass(frozen=True)
class Exercise:
    slug: str
    drill: str  # the slug of the drill the exercise belongs to
    title: str
    kind: Literal["fix", "write"]  # fix the loop, or write the function
    story: str  # Markdown: the situation, without naming the cause
    starter: str  # the file the learner starts from
    # The exercise's folder: solution.py is read from it only when asked for (the `solution`
    # property), because the sandbox masks it (the code inside must not copy the answer).
    folder: str
    hints: tuple[str, ...]  # at least two, each more specific than the one before
    provides: tuple[str, ...]  # the functions (or a model's class) the learner's file must define
    harness: str  # module that runs the learner's code inside the sandbox
    checker: str  # module that measures the results outside (runs no learner code)
    checks: tuple[CheckSpec, ...]
    # One label per hidden seed, in order: what each hidden run is ("5 examples", "run B").
    cases: tuple[str, ...] = ("run A", "run B")

    def __post_init__(self) -> None:
        if len(self.hints) < 2:
            raise ValueError(f"exercise {self.slug!r} needs at least two hints")
        if not self.provides or not self.checks or not self.cases:
            raise ValueError(f"exercise {self.slug!r} needs provides, checks and cases")
        keys = [check.key for check in self.checks]
        if len(set(keys)) != len(keys):
            raise ValueError(f"exercise {self.slug!r} lists a check twice: {keys}")

    @property
    def solution(self) -> str:
        """The reference file: the hint ladder's last rung. Never read inside the sandbox."""
        return (Path(self.folder) / "solution.py").read_text(encoding="utf-8")

    def check_title(self, key: str) -> str:
        for check in self.checks:
            if check.key == key:
                return check.title
        raise KeyError(key)


class ExerciseFiles(TypedDict):
    story: str
    starter: str
    folder: str


def exercise_files(init_file: str) -> ExerciseFiles:
    """The story and the starter kept beside an exercise's `__init__.py`, as text, and the
    folder the solution is read from when asked for."""
    folder = Path(init_file).resolve().parent
    return {
        "story": (folder / "story.md").read_text(encoding="utf-8"),
        "starter": (folder / "starter.py").read_text(encoding="utf-8"),
        "folder": str(folder),
    }


@dataclass(frozen=True)
class CheckResult:
    key: str
    title: str
    status: CheckStatus
    # Helpful without giving the hidden test away: what was measured and what a working file
    # shows, never the hidden reference values an answer could be copied from.
    message: str

    def as_dict(self) -> dict[str, str]:
        return {
            "key": self.key,
            "title": self.title,
            "status": self.status,
            "message": self.message,
        }


@dataclass(frozen=True)
class Judgement:
    exercise: str
    seed: int
    status: JudgementStatus
    checks: tuple[CheckResult, ...] = ()
    # Numbers the judge measured itself, outside the sandbox: "loss (5 examples)": 0.0012.
    measurements: dict[str, SignatureValue] = field(default_factory=dict)
    # The drill's signature, filled from those measurements, and the drill's reading of it.
    signature: dict[str, SignatureValue] = field(default_factory=dict)
    verdict: str | None = None  # the hypothesis key the drill's diagnose() returned
    verdict_text: str | None = None
    message: str | None = None  # why the code could not be judged (syntax error, time-out, ...)
    sandbox: str | None = None  # how the sandboxed run ended ("ok", "timeout", ...); None: no run
    stdout: str = ""  # excerpts of what the sandboxed run printed (untrusted, for display)
    stderr: str = ""
    wall_s: float = 0.0

    @property
    def passed(self) -> bool:
        return self.status == "passed"

    def as_dict(self) -> dict[str, Any]:
        return {
            "exercise": self.exercise,
            "seed": self.seed,
            "status": self.status,
            "checks": [check.as_dict() for check in self.checks],
            "measurements": dict(self.measurements),
            "signature": dict(self.signature),
            "verdict": self.verdict,
            "verdict_text": self.verdict_text,
            "message": self.message,
            "sandbox": self.sandbox,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "wall_s": self.wall_s,
        }


class ContractError(Exception):
    """The learner's function broke its contract in a way the harness can name: it returned the
    wrong shape, type or dtype. Raised inside the sandbox; its message reaches the learner."""
