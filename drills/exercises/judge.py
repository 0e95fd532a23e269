"""Judge a learner's file: run it in the sandbox on hidden seeds, then decide from measurements.

    judge(exercise, code, seed, report=..., run=drills.sandbox.run) -> Judgement

Stage 1 runs inside the sandbox (drills/exercises/inside.py). Stage 2, `decide`, runs here, in a
process that runs no learner code: it loads each weights blob with safetensors, rejects wrong,
missing or extra tensors and non-finite values, rebuilds the model and the data from each hidden
seed with trusted code, and lets the exercise's checks measure. Nothing the run printed or sent
as a frame decides a check; point frames only draw the live curve. The drill's own diagnose()
then reads a signature filled from those measurements.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from drills.core.contract import Reporter
from drills.core.registry import get_drill
from drills.core.syntax import parse
from drills.exercises.contract import CheckResult, Exercise, Judgement, JudgementStatus
from drills.exercises.transport import (
    ENTRY,
    MAX_POINTS,
    Finished,
    Frames,
    SandboxRun,
    blob,
    excerpt,
    read_frames,
    read_point,
)

if TYPE_CHECKING:  # torch, imported by decide() only: listing and not-attempted stay torch-free
    from drills.exercises.evidence import Assessment, CaseEvidence

MAX_CODE = 64_000  # characters of a submitted file

SANDBOX_STATUS = {
    "failed": "the run ended with an error before it could report",
    "timeout": "the run took longer than it may",
    "too-much-output": "the run printed or sent more than it may",
    "unavailable": "the sandbox is not available on this server",
}


def hidden_seeds(exercise: Exercise, seed: int) -> list[int]:
    """The seeds of the hidden runs: fixed by (exercise, seed), not guessable from the seed."""
    seeds = []
    for case in range(len(exercise.cases)):
        digest = hashlib.sha256(f"{exercise.slug}:{seed}:{case}".encode()).digest()
        seeds.append(int.from_bytes(digest[:4], "big") & 0x7FFFFFFF)
    return seeds


def same_as_starter(exercise: Exercise, code: str) -> bool:
    """True when `code` is the starter, trailing whitespace aside."""

    def normal(text: str) -> str:
        return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")

    return normal(code) == normal(exercise.starter)


def syntax_problem(code: str) -> str | None:
    """Why `code` cannot be compiled, naming the line; None if it can. Compiling runs nothing."""
    if len(code) > MAX_CODE:
        return f"exercise.py is {len(code)} characters long; at most {MAX_CODE} are accepted"
    try:
        compile(code, "exercise.py", "exec", dont_inherit=True)
    except SyntaxError as exc:
        text = f"exercise.py, line {exc.lineno}: {exc.msg}"
        if exc.text and exc.text.strip():
            text += f"\n    {exc.text.strip()}"
        return text
    except (ValueError, RecursionError, MemoryError) as exc:  # NUL bytes, absurd nesting
        return f"exercise.py cannot be compiled: {type(exc).__name__}: {exc}"
    return None


def borrowed(exercise: Exercise, code: str) -> str | None:
    """Why a write-it file does not count as written: it imports the drills package, whose kit
    holds working versions of the track's tools (the parameter audit, the update ratio, the
    label shift). Read from the code's text, as compiled; nothing is run. (A fix-the-loop file
    may import what its starter imports.)"""
    if exercise.kind != "write":
        return None
    for node in ast.walk(parse(code)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names = [node.module or ""]
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            # importlib.import_module("drills.kit.audit") or __import__("drills")
            names = [node.value] if node.value.split(".")[0] == "drills" else []
        for name in names:
            if name.split(".")[0] == "drills":
                return (
                    f"exercise.py, line {getattr(node, 'lineno', '?')}: it uses {name!r}; "
                    "write the function yourself, with torch only"
                )
    return None


def judge(
    exercise: Exercise,
    code: str,
    seed: int,
    *,
    report: Reporter,
    run: SandboxRun,
    pool: object | None = None,
) -> Judgement:
    """Run `code` on the exercise's hidden seeds derived from `seed` and judge what it did."""
    started = time.monotonic()
    if same_as_starter(exercise, code):
        return Judgement(
            exercise.slug,
            seed,
            "not-attempted",
            message="This is the starter file as it was handed out: change it, then submit.",
        )
    problem = syntax_problem(code)
    if problem:
        return Judgement(
            exercise.slug, seed, "error", checks=not_run(exercise, problem), message=problem
        )
    copied = borrowed(exercise, code)
    if copied:
        return Judgement(
            exercise.slug, seed, "failed", checks=not_run(exercise, copied), message=copied
        )

    seeds = hidden_seeds(exercise, seed)
    forwarded = 0

    def on_frame(frame: object, *_: object) -> None:
        nonlocal forwarded
        point = read_point(frame)
        if point is not None and forwarded < MAX_POINTS:
            forwarded += 1
            report.metric(point.name, point.step, point.value)

    request = {"exercise": exercise.slug, "code": code, "seeds": seeds}
    finished = run(ENTRY, request, on_frame=on_frame, pool=pool)
    if forwarded == 0:  # a sandbox that does not stream: draw the curve afterwards
        for frame in finished.frames[: 4 * MAX_POINTS]:
            on_frame(frame)
    return decide(exercise, seed, seeds, finished, started=started)


def decide(
    exercise: Exercise,
    seed: int,
    seeds: Sequence[int],
    finished: Finished,
    *,
    started: float | None = None,
) -> Judgement:
    """Stage 2: judge a finished sandbox run from measurements made here."""
    base: dict[str, Any] = {
        "sandbox": str(finished.status),
        "stdout": excerpt(finished.stdout),
        "stderr": excerpt(finished.stderr),
        "wall_s": float(finished.wall_s) if isinstance(finished.wall_s, int | float) else 0.0,
    }
    if started is not None:
        base["wall_s"] = time.monotonic() - started
    if finished.status != "ok":
        reason = SANDBOX_STATUS.get(finished.status, f"the sandbox said {finished.status!r}")
        if finished.reason:
            reason += f": {finished.reason}"
        skipped = not_run(exercise, reason)
        return Judgement(exercise.slug, seed, "error", checks=skipped, message=reason, **base)

    frames = read_frames(finished.frames, len(seeds))
    checker = importlib.import_module(exercise.checker)  # imports torch
    cases = [
        case_evidence(exercise, checker, case, case_seed, finished, frames)
        for case, case_seed in enumerate(seeds)
    ]
    try:
        assessment: Assessment = checker.assess(exercise, cases)
    except Exception as exc:  # a checker tripped on what came back: never the judge's crash
        reason = f"the judge could not measure what this run sent back ({type(exc).__name__})"
        skipped = not_run(exercise, reason)
        return Judgement(exercise.slug, seed, "error", checks=skipped, message=reason, **base)
    checks = in_declared_order(exercise, assessment.checks)

    signature = assessment.signature.as_dict() if assessment.signature is not None else {}
    verdict = verdict_text = None
    if assessment.signature is not None:
        drill = get_drill(exercise.drill)
        verdict = drill.diagnose(signature, None)
        verdict_text = next((h.text for h in drill.hypotheses if h.key == verdict), None)

    messages = [message for _, message in frames.errors] + frames.problems
    status: JudgementStatus
    if frames.errors or frames.problems or any(check.status == "error" for check in checks):
        status = "error"
    elif all(check.status == "pass" for check in checks):
        status = "passed"
    else:
        status = "failed"
    message = None
    if frames.problems:
        message = (
            "The run sent frames the judge could not read (did something write to the "
            "judge's channel?): " + "; ".join(frames.problems[:3])
        )
    elif messages:
        message = messages[0]
    return Judgement(
        exercise.slug,
        seed,
        status,
        checks=tuple(checks),
        measurements=assessment.measurements,
        signature=signature,
        verdict=verdict,
        verdict_text=verdict_text,
        message=message,
        **base,
    )


def case_evidence(
    exercise: Exercise,
    checker: Any,
    case: int,
    seed: int,
    finished: Finished,
    frames: Frames,
) -> CaseEvidence:
    from drills.exercises.evidence import CaseEvidence
    from drills.exercises.tensors import UnreadableTensors, check_against, load_tensors

    initial = checker.reference_weights(case, seed)
    weights, problem = None, None
    try:
        loaded = load_tensors(blob(finished.blobs, f"weights-{case}"))
        problem = check_against(loaded, initial)
        weights = None if problem else loaded
    except UnreadableTensors as exc:
        problem = str(exc)
    values = None
    try:
        values = load_tensors(blob(finished.blobs, f"values-{case}"))
    except UnreadableTensors:
        pass
    return CaseEvidence(
        case=case,
        label=exercise.cases[case],
        seed=seed,
        initial=initial,
        weights=weights,
        weights_problem=problem,
        values=values,
        frames=frames,
        error=frames.error_for(case),
    )


def not_run(exercise: Exercise, why: str) -> tuple[CheckResult, ...]:
    """Every check as an error, when the code could not be run at all."""
    first = why.strip().splitlines()[0] if why.strip() else why
    return tuple(
        CheckResult(spec.key, spec.title, "error", f"Not run: {first}") for spec in exercise.checks
    )


def in_declared_order(exercise: Exercise, checks: Sequence[CheckResult]) -> list[CheckResult]:
    """The checks as the exercise lists them; one the checker did not answer is an error."""
    by_key = {check.key: check for check in checks}
    ordered = []
    for spec in exercise.checks:
        found = by_key.get(spec.key)
        if found is None:
            found = CheckResult(spec.key, spec.title, "error", "the judge could not decide this")
        ordered.append(found)
    return ordered
