"""`python -m drills cases audit`: does every cause of the case sets read as planted on random
seeds, not only on the seeds the tables were built from? Real runs of silent-no-learning, whose
too-large rate (lr 5) climbs back out and learns on about 1 draw in 100."""

import json
import shlex

import pytest

from drills.cases import audit
from drills.cases.draw import SEED_RANGE
from drills.cases.outcomes import nuisance_corners
from drills.cases.registry import all_case_sets, all_cases, get_case
from drills.cli import main

SILENT = get_case("a-new-training-script").case_set
# Origin 60's first seed: lr 5 over 150 steps climbs to 3.9 times its start and then learns
# (loss 1.39 -> 1.19, "healthy"); over 300 steps the same seed climbs to 11 and reads "diverges".
ORIGIN, STRAY = 60, 1322019967


def test_every_cause_of_every_case_set_is_audited_at_both_ends_of_its_ranges() -> None:
    entries = audit.planted(all_case_sets())
    covered = {(entry.case_set.drill, entry.cause) for entry in entries}
    # Rounds show every cause of a set, retired ones included; cases draw the offered ones.
    assert covered == {(s.drill, cause.key) for s in all_case_sets() for cause in s.causes}
    assert {(case.case_set.drill, cause) for case in all_cases() for cause in case.causes} <= (
        covered
    )
    for entry in entries:
        assert entry.knobs == {
            **entry.case_set.base,
            **entry.corner,
            **entry.case_set.cause(entry.cause).knobs,
        }
    corners = [entry.corner for entry in audit.planted([SILENT]) if entry.cause == "rate-too-large"]
    assert corners == nuisance_corners(SILENT)


def test_the_same_origin_draws_the_same_seeds_from_the_draws_range() -> None:
    seeds = audit.random_seeds(50, ORIGIN)
    assert seeds == audit.random_seeds(50, ORIGIN)
    assert seeds[0] == STRAY
    assert all(0 <= seed < SEED_RANGE for seed in seeds)
    assert audit.random_seeds(50, ORIGIN + 1) != seeds


def test_a_run_that_does_not_read_as_its_cause_is_reported_with_its_replay() -> None:
    short = next(
        entry
        for entry in audit.planted([SILENT])
        if entry.cause == "rate-too-large" and entry.corner["steps"] == 150
    )
    (row,) = audit.audit([short], [0, STRAY])
    assert row.runs == 2
    (miss,) = row.misses
    assert (miss.seed, miss.reading) == (STRAY, "healthy")
    assert miss.command == (
        "python -m drills run silent-no-learning --set bug=none --set lr=5.0 --set steps=150 "
        f"--seed {STRAY}"
    )


def test_the_command_prints_each_cause_and_every_miss_and_fails_on_one(
    capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["cases", "audit", "--drill", "silent-no-learning", "--cause", "rate-too-large"]
    assert main([*argv, "--seeds", "1", "--origin", str(ORIGIN), "--jobs", "2"]) == 1
    printed = capsys.readouterr().out.splitlines()
    assert printed[0] == "silent-no-learning rate-too-large (lr=5.0, steps=150): diverges on 0 of 1"
    assert printed[1] == (
        "    read healthy: python -m drills run silent-no-learning --set bug=none --set lr=5.0 "
        f"--set steps=150 --seed {STRAY} --json"
    )
    assert printed[2] == "silent-no-learning rate-too-large (lr=5.0, steps=300): diverges on 1 of 1"
    assert printed[3] == "1 of 2 runs did not read as their planted cause (seeds from 60)"

    # The printed command replays the very run the audit read.
    command = shlex.split(printed[1].split(": ", 1)[1])
    assert command[:3] == ["python", "-m", "drills"]
    assert main(command[3:]) == 0
    record = json.loads(capsys.readouterr().out)
    assert SILENT.drill_object.diagnose(record["signature"], record["error"]) == "healthy"


def test_an_audit_without_a_miss_passes(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["cases", "audit", "--drill", "silent-no-learning", "--cause", "step-never-called"]
    assert main([*argv, "--seeds", "2"]) == 0
    assert "0 of 4 runs did not read" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv",
    [
        ["--drill", "no-such-drill"],
        ["--cause", "no-such-cause"],
        ["--seeds", "0"],
        ["--jobs", "0"],
    ],
)
def test_an_audit_of_nothing_says_what_to_check(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cases", "audit", *argv]) == 2
    assert "nothing to audit: check --drill, --cause, --seeds and --jobs" in (
        capsys.readouterr().out
    )
