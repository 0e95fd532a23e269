"""One exercise end to end through the real sandbox (drills/sandbox/), from the command line: a
solution passes and its JSON judgement holds the drill's verdict. Skipped where no sandbox can
start (the other tests run stage 1 through the forked double)."""

import json
from pathlib import Path

import pytest

from drills.cli import main
from drills.exercises.registry import get_exercise

sandbox = pytest.importorskip("drills.sandbox", reason="drills/sandbox/ is not built yet")


@pytest.fixture(scope="module")
def usable() -> None:
    reason = sandbox.available()
    if reason is not None:
        pytest.skip(f"no sandbox can start here: {reason}")


@pytest.mark.parametrize(
    ("slug", "verdict"),
    [
        ("graph-detached-features", "intact"),
        ("overfit-ladder", "fits"),
        ("accumulation-big-batch-step", "healthy"),
        ("mixed-precision-float32-step", "healthy"),
        ("per-token-loss", "per-token"),
        ("evaluation-encodes-like-training", "healthy"),
        ("group-leakage-honest-split", "honest"),
        ("nan-hunt-confident-logits", "clean"),
        ("padding-both-masks", "healthy"),
        ("loss-spikes-wrong-labels", "clean"),
        ("lr-sweep-choose-rate", "bracketed"),
        ("init-check-sound-start", "healthy"),
        ("gradient-check-smooth-l1-backward", "correct"),
        ("loss-vs-metric-rare-class", "aligned"),
        ("overfitting-honest-early-stop", "generalises"),
        ("silent-no-learning-gradient-panel", "healthy"),
    ],
)
def test_a_solution_passes_in_the_real_sandbox(
    usable: None, slug: str, verdict: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    exercise = get_exercise(slug)
    code = tmp_path / "mine.py"
    code.write_text(exercise.solution)
    exit_code = main(["exercise", "run", exercise.slug, "--code", str(code), "--json"])
    judgement = json.loads(capsys.readouterr().out)
    assert (exit_code, judgement["status"]) == (0, "passed"), judgement
    assert judgement["verdict"] == verdict
    assert {check["status"] for check in judgement["checks"]} == {"pass"}


@pytest.mark.parametrize(
    "slug",
    [
        "parameter-audit",
        "relative-update",
        "label-audit",
        "batch-noise-spike",
        "first-non-finite",
        "write-it-twice",
        "static-batch-seeded-overfit",
        "pipeline-test",
    ],
)
def test_a_write_it_solution_passes_in_the_real_sandbox(
    usable: None, slug: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The write-it harnesses send back tables, numbers and empty weights: through the real
    channel too. These exercises measure no training run, so there is no drill verdict."""
    exercise = get_exercise(slug)
    code = tmp_path / "mine.py"
    code.write_text(exercise.solution)
    exit_code = main(["exercise", "run", slug, "--code", str(code), "--seed", "3", "--json"])
    judgement = json.loads(capsys.readouterr().out)
    assert (exit_code, judgement["status"]) == (0, "passed"), judgement
    assert [check["key"] for check in judgement["checks"]] == [c.key for c in exercise.checks]
    assert judgement["verdict"] is None
