import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from drills.cli import main
from drills.core.registry import all_drills, get_drill
from drills.core.runner import run_drill

ROOT = Path(__file__).resolve().parents[2]
RECORD_KEYS = {
    "drill", "drill_version", "knobs", "seed", "command", "status", "error", "metrics",
    "diagnostics", "signature", "observed", "inputs", "environment", "digest", "timings",
}  # fmt: skip


def drills_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "drills", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_list_json_describes_the_catalogue() -> None:
    result = drills_cli("list", "--json")
    assert result.returncode == 0, result.stderr
    catalogue = json.loads(result.stdout)
    assert [drill["slug"] for drill in catalogue] == [drill.slug for drill in all_drills()]
    assert catalogue[0]["slug"] == "overfit-one-batch"


def test_runs_in_separate_processes_give_the_same_digest() -> None:
    argv = ("run", "overfit-one-batch", "--set", "bug=shuffled-labels", "--seed", "1", "--json")
    first, second = drills_cli(*argv), drills_cli(*argv)
    assert first.returncode == second.returncode == 0, first.stderr
    one, two = json.loads(first.stdout), json.loads(second.stdout)
    assert set(one) == RECORD_KEYS
    assert one["digest"] == two["digest"]
    assert one["metrics"] == two["metrics"]
    # ...and the same as this process (same torch, one thread, same CPU).
    here = run_drill("overfit-one-batch", {"bug": "shuffled-labels"}, 1)
    assert here["digest"] == one["digest"]


def test_a_bad_knob_exits_2_with_one_line_naming_it() -> None:
    result = drills_cli("run", "overfit-one-batch", "--set", "lr=abc")
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "'lr'" in lines[0]
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["run", "no-such-drill"], "no-such-drill"),
        (["run", "overfit-one-batch", "--set", "epochs=3"], "epochs"),
        (["run", "overfit-one-batch", "--set", "examples=3"], "examples"),
        (["run", "overfit-one-batch", "--set", "steps=1.5"], "steps"),
        (["run", "overfit-one-batch", "--set", "bug"], "KNOB=VALUE"),
        (["run", "overfit-one-batch", "--set", "lr=0.1", "--set", "lr=0.2"], "lr"),
        (["run", "overfit-one-batch", "--seed", "-3"], "seed"),
        (["run", "overfit-one-batch", "--seed", "x"], "--seed"),
        (["fly"], "fly"),
    ],
)
def test_bad_requests_exit_2_before_running(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert named in err


def test_a_failed_run_exits_1_and_still_prints_the_record(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "overfit-one-batch", "--set", "bug=all-padding", "--json"]) == 1
    record = json.loads(capsys.readouterr().out)
    assert record["status"] == "error"
    assert "no supervised targets" in record["error"]


def test_the_human_summary_shows_status_digest_and_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["run", "overfit-one-batch", "--set", "steps=20"]) == 0
    out = capsys.readouterr().out
    assert "status:   ok" in out
    assert "final_loss" in out
    assert "digest:" in out
    assert "python -m drills run overfit-one-batch" in out


def test_list_prints_one_line_per_drill(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["list"]) == 0
    assert capsys.readouterr().out.startswith("overfit-one-batch")


def test_verdicts_lists_each_variant_of_a_drill_with_its_verdict_per_seed(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["verdicts", "--drill", "init-check", "--seeds", "2", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    choices = next(knob.choices for knob in get_drill("init-check").knobs if knob.choices)
    default = next(knob.default for knob in get_drill("init-check").knobs if knob.choices)
    assert rows[0]["knobs"] == {}  # the defaults first, then every other value of the choice
    assert [row["knobs"] for row in rows[1:]] == [
        {"init": choice} for choice in choices if choice != default
    ]
    hypotheses = {h.key for h in get_drill("init-check").hypotheses}
    for row in rows:
        assert row["drill"] == "init-check"
        assert len(row["verdicts"]) == 2 and set(row["verdicts"]) <= hypotheses
        assert row["agree"] == (len(set(row["verdicts"])) == 1)


def test_verdicts_marks_the_rows_where_seeds_disagree(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def fake_run(slug: str, knobs: dict[str, Any], seed: int) -> dict[str, Any]:
        flips = knobs.get("init") == "too-small" and seed == 1
        return {"observed": "healthy" if not flips else "vanishing", "status": "ok"}

    monkeypatch.setattr("drills.core.runner.run_drill", fake_run)
    assert main(["verdicts", "--drill", "init-check", "--seeds", "3"]) == 0
    lines = capsys.readouterr().out.splitlines()
    marked = [line for line in lines if line.startswith("*")]
    assert len(marked) == 1 and "init=too-small" in marked[0]
    assert "healthy / vanishing / healthy" in marked[0]
    assert lines[-1].endswith("1 where the seeds disagree (*)")


@pytest.mark.parametrize(
    "argv", [["verdicts", "--seeds", "0"], ["verdicts", "--drill", "no-such-drill"]]
)
def test_verdicts_refuses_bad_arguments_with_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    assert "error" in capsys.readouterr().err
