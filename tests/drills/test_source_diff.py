"""What a fix changes in the code that ran: the branch of the cause as removed lines, the branch
the fix takes as added ones, the test between them as a line that decides otherwise, knob values
for a fix that changes only a number, and nothing for a case with nothing planted. Torch-free:
the code is read, never run."""

from __future__ import annotations

import json

import pytest

from drills.cases.contract import Case
from drills.cases.draw import Draw, draw, fix_knobs
from drills.cases.registry import all_cases, get_case
from drills.core.branch_changes import branch_changes
from drills.core.contract import Knob
from drills.core.knob_conditions import KnobSwitch
from drills.core.registry import get_drill
from drills.core.source import training_source
from drills.core.source_diff import (
    DiffLine,
    KnobChange,
    SourceDiff,
    hunks,
    python_literal,
    source_diff,
)


def signed(diff: SourceDiff, path_end: str) -> list[tuple[str, str]]:
    """(sign, stripped text) of every line of one file's hunks."""
    file = next(file for file in diff.files if file.path.endswith(path_end))
    return [(line.sign, line.text.strip()) for hunk in file.hunks for line in hunk.lines]


def changed(diff: SourceDiff, path_end: str, sign: str) -> list[str]:
    return [text for mark, text in signed(diff, path_end) if mark == sign]


def test_shuffled_labels_against_none_removes_the_shuffle() -> None:
    diff = source_diff(get_drill("overfit-one-batch"), {"bug": "shuffled-labels"}, {"bug": "none"})
    assert diff.knobs == (KnobChange("bug", '"shuffled-labels"', '"none"'),)
    assert diff.files[0].path == "catalog/overfit_one_batch/train.py"  # train.py first
    assert changed(diff, "train.py", "!") == ['if bug == "shuffled-labels":']
    assert changed(diff, "train.py", "-") == [
        "step_targets = targets[torch.randperm(config.examples)]"
    ]
    assert changed(diff, "train.py", "+") == []
    # Context either side, with the numbers of the file.
    [hunk] = diff.files[0].hunks
    lines = training_source(get_drill("overfit-one-batch"), {})[0].lines
    assert all(line.text == lines[line.number - 1] for line in hunk.lines)
    assert [line.kind for line in hunk.lines[:3]] == ["context"] * 3
    text = diff.as_text()
    assert '- bug = "shuffled-labels"' in text and '+ bug = "none"' in text
    assert "--- drills/catalog/overfit_one_batch/train.py" in text


def test_the_fix_of_a_case_that_changes_only_a_rate_shows_the_values() -> None:
    case = get_case("a-loss-that-climbs-to-the-sky")
    drawn = Draw("rate-too-large", 3, draw(case, 1, 1).knobs | {"lr": 1.2})
    fixed = fix_knobs(case, drawn, case.case_set.fix(case.fix_of("rate-too-large")))
    diff = source_diff(case.case_set.drill_object, drawn.knobs, fixed)
    assert diff.files == ()  # no line of the code changes
    assert diff.knobs == (KnobChange("lr", "1.2", "0.15"),)
    assert not diff.changes_nothing
    assert diff.as_text() == "- lr = 1.2\n+ lr = 0.15"


def test_a_test_that_skips_the_step_adds_the_step_back() -> None:
    """`if bug != "no-step": optimizer.step()`: the fix makes the step run, so it is added."""
    diff = source_diff(get_drill("silent-no-learning"), {"bug": "no-step"}, {"bug": "none"})
    assert changed(diff, "train.py", "!") == ['if bug != "no-step":']
    assert changed(diff, "train.py", "+") == ["optimizer.step()"]
    assert changed(diff, "train.py", "-") == []


def test_a_fix_that_moves_a_call_removes_one_branch_and_adds_the_other() -> None:
    diff = source_diff(get_drill("mixed-precision"), {"unscale": "late"}, {"unscale": "first"})
    assert changed(diff, "train.py", "!") == [
        'if config.unscale == "first":',
        'if config.unscale == "late":',
    ]
    assert changed(diff, "train.py", "+") == [
        "scaler.unscale_(optimizer)  # .grad now holds the gradient itself"
    ]
    removed = changed(diff, "train.py", "-")
    assert removed[-1] == "scaler.unscale_(optimizer)" and removed[0].startswith("# Too late")


def test_a_branch_that_returns_leaves_the_rest_of_the_function_to_the_fix() -> None:
    diff = source_diff(get_drill("optimizer-membership"), {"exclude": "backbone"}, {})
    assert changed(diff, "train.py", "-") == ["return model.head.parameters()"]
    assert changed(diff, "train.py", "+") == ["return model.parameters()"]


def test_a_knob_read_in_an_expression_marks_the_line_that_decides() -> None:
    diff = source_diff(
        get_drill("double-shift-labels"), {"attention": "unmasked"}, {"attention": "causal"}
    )
    assert changed(diff, "train.py", "!") == ['causal=config.attention == "causal",']


SOURCE = """\
def step(bug, rows, sharpness):
    if bug == "a":
        one()
    elif bug in ("b", "c"):
        # a comment at the top of the branch
        two()
    else:
        three()
    if bug == "a" and sharpness > 0:
        four()
    count = sum(row["grad"] == "none" for row in rows)
    if bug == "c":
        return count
    five()
"""
BUG = Knob("bug", "choice", "none", "the bug", choices=("none", "a", "b", "c"))


def lines_of(changes: frozenset[int]) -> list[str]:
    return [SOURCE.splitlines()[number - 1].strip() for number in sorted(changes)]


def test_branches_elif_else_and_an_early_return() -> None:
    changes = branch_changes(SOURCE, (KnobSwitch(BUG, "c", "none"),))
    assert lines_of(changes.decides) == ['elif bug in ("b", "c"):', 'if bug == "c":']
    assert lines_of(changes.removed) == [
        "# a comment at the top of the branch",
        "two()",
        "return count",
    ]
    # The `else` the fix takes, and what the return skipped before.
    assert lines_of(changes.added) == ["three()", "five()"]


def test_a_test_the_knob_alone_does_not_decide_and_a_string_of_another_meaning() -> None:
    changes = branch_changes(SOURCE, (KnobSwitch(BUG, "a", "b"),))
    # `bug == "a" and sharpness > 0` is False with "b" but unknown with "a": left alone.
    assert "four()" not in lines_of(changes.removed | changes.added)
    assert 'if bug == "a" and sharpness > 0:' in lines_of(changes.decides)
    # `row["grad"] == "none"` does not read the knob, though "none" is one of its values.
    assert not any("count" in line for line in lines_of(changes.decides))
    assert lines_of(changes.removed) == ["one()"]
    assert lines_of(changes.added) == ["# a comment at the top of the branch", "two()"]


def test_a_table_of_variants_counts_the_entry_each_side_looks_up() -> None:
    source = 'VARIANTS = {\n    "none": plain,\n    "a": broken,\n}\n\ndef broken():\n    pass\n'
    changes = branch_changes(source, (KnobSwitch(BUG, "a", "none"),))
    assert sorted(changes.removed) == [3, 6, 7]
    assert sorted(changes.added) == [2]


def test_hunks_keep_a_few_lines_of_context_and_merge_when_they_touch() -> None:
    lines = [f"line {number}" for number in range(1, 31)]
    found = hunks(lines, {2: "removed", 9: "added", 25: "decides"}, context=3)
    assert [(hunk.first, hunk.last) for hunk in found] == [(1, 12), (22, 28)]
    assert found[0].lines[1] == DiffLine(2, "removed", "line 2")
    assert [line.sign for line in found[1].lines] == [" ", " ", " ", "!", " ", " ", " "]
    assert hunks(lines, {}) == ()


def test_knob_values_are_written_as_python_writes_them() -> None:
    assert python_literal("shuffled-labels") == '"shuffled-labels"'
    assert python_literal(0.1 * 3) == "0.3"
    assert python_literal(1.0) == "1.0"
    assert python_literal((1e-06, 0.0001)) == "(1e-06, 0.0001)"
    assert python_literal([3.0]) == "(3.0,)"
    assert python_literal(64) == "64"


def test_the_same_knobs_change_nothing_even_read_back_from_json() -> None:
    drill = get_drill("lr-sweep")
    knobs = {"lrs": (1e-06, 0.0001, 0.01, 1.0)}
    assert source_diff(drill, json.loads(json.dumps(knobs)), knobs).changes_nothing


@pytest.mark.parametrize("case", all_cases(), ids=lambda case: case.key)
def test_every_hidden_cause_has_a_diff_that_shows_its_fix(case: Case) -> None:
    """Each cause a case may hide, fixed as the case set says: a healthy one changes nothing;
    any other changes knob values, and a switched choice knob changes lines of the code."""
    drill = case.case_set.drill_object
    for cause_key in case.causes:
        cause = case.cause(cause_key)
        drawn = draw(case, 1, 1)
        ran = Draw(cause.key, drawn.seed, drawn.knobs | dict(cause.knobs))
        fixed = fix_knobs(case, ran, case.case_set.fix(cause.fix))
        diff = source_diff(drill, ran.knobs, fixed)
        if cause.family == "healthy":
            assert diff.changes_nothing, cause.key
            continue
        assert diff.knobs, cause.key
        choices = {knob.name for knob in drill.knobs if knob.kind == "choice"}
        if any(change.name in choices for change in diff.knobs):
            assert diff.files, cause.key
        sources = {file.path: file.lines for file in training_source(drill, {})}
        for file in diff.files:
            numbers = [line.number for hunk in file.hunks for line in hunk.lines]
            assert numbers == sorted(set(numbers)), (cause.key, file.path)
            assert all(1 <= number <= len(sources[file.path]) for number in numbers)
