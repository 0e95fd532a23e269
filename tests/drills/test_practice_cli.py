"""`python -m drills practice ...` and the simulated learner behind `simulate`."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest

from drills.cli import USAGE_ERROR, main
from drills.practice.items import all_items
from drills.practice.scheduling import Rating
from drills.practice.simulate import START, simulate


def test_items_lists_every_key_and_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["practice", "items"]) == 0
    out = capsys.readouterr().out
    for item in all_items():
        assert item.key in out and item.prompt in out
    assert out.rstrip().endswith(f"{len(all_items())} items")


def test_items_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["practice", "items", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [row["key"] for row in rows] == [item.key for item in all_items()]
    assert set(rows[0]) == {"key", "topic", "prompt", "answer", "drills"}


def test_simulate_prints_two_weeks(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["practice", "simulate", "--days", "14"]) == 0
    out = capsys.readouterr().out
    assert "fastest-wiring-check" in out
    table = out.split("day  new  due  reviews  again  good\n")[1].splitlines()
    assert [int(row.split()[0]) for row in table] == list(range(1, 15))


def test_rounds_prints_a_week_without_repeats(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["practice", "rounds", "--days", "7", "--per-day", "2"]) == 0
    assert "14 distinct variants in 14 rounds" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["practice", "simulate", "--days", "0"],
        ["practice", "rounds", "--per-day", "0"],
        ["practice", "nothing"],
    ],
)
def test_bad_arguments_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == USAGE_ERROR
    assert "python -m drills: error:" in capsys.readouterr().err


def test_the_simulated_learner_reviews_only_what_is_due_and_spaces_it_out() -> None:
    days, histories = simulate(14, new_per_day=5, seed=3)
    assert sum(day.new for day in days) == len(all_items())
    assert days[0].due == 0 and days[0].reviews >= 5
    for history in histories:
        logs = history.logs
        assert logs and logs[0].elapsed_days is None  # met once, as new
        for earlier, later in zip(logs, logs[1:], strict=False):
            assert later.reviewed_at >= earlier.due_after  # never before it was due
            if earlier.rating is Rating.GOOD:
                assert later.reviewed_at - earlier.reviewed_at >= timedelta(days=1)
        # An item rated good on every review waits longer each time.
        if all(log.rating is Rating.GOOD for log in logs):
            intervals = [log.interval for log in logs]
            assert intervals == sorted(intervals) and len(set(intervals)) == len(intervals)
    assert simulate(14, seed=3) == (days, histories)
    assert histories[0].logs[0].reviewed_at == START
