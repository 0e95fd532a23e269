"""`python -m drills exercise ...`: list, show (never the solution unless asked), run."""

from pathlib import Path
from typing import Any

import pytest

import drills.sandbox
from drills.cli import main
from drills.exercises.registry import get_exercise
from tests.exercises.sandbox_double import Finished

OVERFIT = get_exercise("overfit-shuffled-pairs")


def test_list_names_every_exercise(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exercise", "list"]) == 0
    out = capsys.readouterr().out
    assert "overfit-shuffled-pairs" in out and "labels-shift-once" in out


def test_show_prints_the_story_and_starter_but_not_the_solution(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["exercise", "show", OVERFIT.slug]) == 0
    out = capsys.readouterr().out
    assert OVERFIT.starter in out and OVERFIT.story.strip() in out
    assert "one permutation for both" not in out
    assert main(["exercise", "show", OVERFIT.slug, "--solution"]) == 0
    assert OVERFIT.solution in capsys.readouterr().out


def test_an_unknown_exercise_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["exercise", "show", "nope"]) == 2
    assert "unknown exercise" in capsys.readouterr().err


def test_run_without_a_sandbox_says_so_and_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def unavailable(entry: str, request: dict[str, Any], **kwargs: Any) -> Finished:
        return Finished("unavailable", None, reason="code cannot run on this server: no bwrap")

    monkeypatch.setattr(drills.sandbox, "run", unavailable)
    code = tmp_path / "mine.py"
    code.write_text(OVERFIT.solution)
    assert main(["exercise", "run", OVERFIT.slug, "--code", str(code), "--seed", "1"]) == 1
    captured = capsys.readouterr()
    assert "sandbox is not available" in captured.err and "no bwrap" in captured.err
    assert "status:   error" in captured.out


def test_the_worker_record_carries_the_judgement_and_the_curve() -> None:
    from drills.exercises.record import exercise_command, run_exercise
    from tests.exercises.sandbox_double import fork_run

    exercise = get_exercise("optimizer-new-head")
    batches: list[list[tuple[str, int, float]]] = []
    record = run_exercise(exercise, exercise.solution, 2, emit=batches.append, run=fork_run)
    assert record["status"] == "ok" and record["error"] is None
    assert record["exercise"]["status"] == "passed"
    assert record["observed"] == "all-optimized" == record["exercise"]["verdict"]
    assert record["command"] == exercise_command(exercise.slug, 2)
    assert record["command"].startswith("python -m drills exercise run optimizer-new-head")
    streamed = [point for batch in batches for point in batch]
    assert len(streamed) == sum(len(series) for series in record["metrics"].values()) > 0
