"""`python -m drills cases pairs`: per case, every pair of its causes with the experiments that
tell the two apart, read from the stored outcome table."""

import pytest

from drills.cases import outcomes
from drills.cases.registry import all_cases, get_case
from drills.cli import main


def test_pairs_lists_every_pair_of_every_case_with_what_separates_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["cases", "pairs"]) == 0
    printed = capsys.readouterr().out
    for case in all_cases():
        assert f"### {case.key} ({case.case_set.drill};" in printed
        pairs = len(case.causes) * (len(case.causes) - 1) // 2
        block = printed.split(f"### {case.key} ")[1].split("###")[0]
        rows = [line for line in block.splitlines() if line.startswith("| ")]
        assert len(rows) - 1 == pairs, case.key  # less the header
    # The two graph cuts that both crash at the first backward: only following grad_fn shows
    # where the record ends.
    assert "| loss-from-number | forward-without-recording | follow-grad-fn |" in printed


def test_a_pair_no_experiment_separates_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    case = get_case("first-step-crash")
    monkeypatch.setattr(outcomes, "separates", lambda *args: False)
    from drills.cases.cli import pair_table

    assert "| loss-from-number | forward-without-recording | (none) |" in pair_table(case)


def test_a_rebuild_of_one_drill_writes_that_drills_table_only(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A rebuild takes minutes; another drill's table stored meanwhile must not be put back
    as it stood when the rebuild started."""
    from drills.cases import symptoms

    written: list[dict[str, object]] = []
    monkeypatch.setattr(symptoms, "build", lambda case_set: {"rebuilt": []})
    monkeypatch.setattr(symptoms, "write_table", written.append)
    assert main(["cases", "symptoms", "--drill", "nan-hunt", "--write"]) == 0
    assert written == [{"nan-hunt": {"rebuilt": []}}]
    assert "1 case set(s) differ from the stored table (written)" in capsys.readouterr().out


def test_why_names_what_gives_a_deciding_draw_away(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """As if labels two ahead had settled at 1.6 on the two-successor text, above where every
    other cause of a-borrowed-data-loader ends: those draws decide it, for that."""
    from drills.cases import symptoms

    stored = symptoms.stored_table()
    rows = stored["double-shift-labels"]
    high = {"last:training loss": 1.6, "number:final_loss": 1.6}
    drawn = symptoms.draws(get_case("a-new-collator").case_set)
    two_ahead = [
        {**draw, **high} if nuisance["text"] == "two-successors" else draw
        for draw, (_, nuisance) in zip(rows["labels-two-ahead"], drawn, strict=True)
    ]
    changed = {**stored, "double-shift-labels": {**rows, "labels-two-ahead": two_ahead}}
    monkeypatch.setattr(symptoms, "stored_table", lambda: changed)
    assert main(["cases", "why", "a-borrowed-data-loader", "a-spike-far-above-the-rest"]) == 0
    printed = capsys.readouterr().out
    assert "a-borrowed-data-loader (double-shift-labels; the symptom decides 10% of draws)" in (
        printed
    )
    for draw in (0, 3):  # the draws on the first corner: that text
        assert f"labels-two-ahead, draw {draw} (seed {draw}, {{'steps': 200, 'text': " in printed
    assert "labels-two-ahead, draw 1 " not in printed
    assert "    not labels-sound: last:training loss = 1.6" in printed
    assert "labels-sound, draw" not in printed  # consistent with the others
    # A case whose symptom decides nothing lists no draw.
    block = printed.split("a-spike-far-above-the-rest (batch-noise;")[1]
    assert "decides 0% of draws)" in block and "draw" not in block.split("\n", 1)[1]


def test_why_refuses_a_case_it_does_not_know(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["cases", "why", "no-such-case"]) == 2
    assert "unknown case 'no-such-case'" in capsys.readouterr().out


def test_outside_names_each_feature_beyond_the_other_causes_range() -> None:
    from drills.cases.symptoms import consistent, outside

    others = [{"last:loss": 1.0, "raised": "no"}, {"last:loss": 1.2, "raised": "no"}]
    assert list(outside({"last:loss": 1.1, "raised": "no"}, others)) == []
    assert consistent({"last:loss": 1.1, "raised": "no"}, others)
    found = list(outside({"last:loss": 3.0, "raised": "yes"}, others))
    assert found == ["last:loss = 3, outside 0.88 to 1.34", "raised = yes, never seen there"]
    assert not consistent({"last:loss": 3.0, "raised": "yes"}, others)
    assert list(outside({"last:loss": 1.0}, [])) == ["no draws to hold it against"]


def test_other_nuisance_ranges_are_tried_in_memory_and_never_stored(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cases symptoms --drill D --nuisance JSON` rebuilds D's table with the given ranges (the
    other nuisance knobs keep theirs) and prints each case's share on it beside the stored one."""
    from drills.cases import symptoms

    stored = symptoms.stored_table()["double-shift-labels"]
    built: list[object] = []

    def build(case_set: object, seeds: object) -> dict[str, object]:
        built.append(case_set)
        assert seeds == symptoms.SEEDS  # the stored table's draws, unless --seeds says others
        # As if labels two ahead had ended far off every other cause's loss: each of their five
        # draws decides, 5 of a-borrowed-data-loader's 20.
        apart = [{**draw, "number:final_loss": 99.0} for draw in stored["labels-two-ahead"]]
        return {**stored, "labels-two-ahead": apart}

    monkeypatch.setattr(symptoms, "build", build)
    monkeypatch.setattr(symptoms, "write_table", lambda table: pytest.fail("stored"))
    tried = ["--drill", "double-shift-labels", "--nuisance", '{"steps": [300]}']
    assert main(["cases", "symptoms", *tried]) == 0
    (case_set,) = built
    texts = ("two-successors", "coin-every-letter", "dice-every-letter")
    assert case_set.nuisance == {"steps": (300,), "text": texts}  # type: ignore[attr-defined]
    printed = capsys.readouterr().out
    assert "a-borrowed-data-loader           stored 0  tried 0.25" in printed
    assert "better-than-the-entropy          stored 0  tried 0" in printed


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        (["--nuisance", '{"lr": [0.3]}'], "needs --drill"),
        (["--drill", "init-check", "--write", "--nuisance", '{"lr": [0.3]}'], "--write"),
        (["--drill", "no-such", "--nuisance", '{"lr": [0.3]}'], "no case set stands on"),
        (["--drill", "init-check", "--nuisance", "lr=0.3"], "is not JSON"),
        (["--drill", "init-check", "--nuisance", '{"lr": 0.3}'], "lists of values"),
        (["--drill", "init-check", "--nuisance", '{"depth": [2]}'], "knob 'depth'"),
        (["--drill", "init-check", "--nuisance", '{"lr": [0.1, -1]}'], "below the minimum"),
        (["--drill", "init-check", "--seeds", "0"], "at least 1 seed"),
        (["--drill", "init-check", "--seeds", "10", "--write"], "--write"),
        (["--drill", "no-such", "--seeds", "10"], "no case set stands on"),
    ],
)
def test_bad_nuisance_ranges_exit_2_naming_what_is_wrong(
    arguments: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["cases", "symptoms", *arguments]) == 2
    assert named in capsys.readouterr().out


def test_a_share_is_tried_on_more_seeds_and_never_stored(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`cases symptoms --drill D --seeds N` rebuilds D's table on seeds 0..N-1 and prints each
    case's share on it beside the stored one; nothing is written."""
    from drills.cases import symptoms

    stored = symptoms.stored_table()["loss-spikes"]
    asked: list[object] = []

    def build(case_set: object, seeds: object) -> dict[str, list[symptoms.Features]]:
        asked.append(seeds)
        # The stored table's first two draws (draws go seed by seed), as if a rate typed into
        # the loop had left the run as calm as a healthy one on them.
        return {cause: draws[:2] for cause, draws in stored.items()} | {
            "rate-typed-into-the-loop": stored["ordinary-wobble"][:2]
        }

    monkeypatch.setattr(symptoms, "build", build)
    monkeypatch.setattr(symptoms, "write_table", lambda table: pytest.fail("stored"))
    assert main(["cases", "symptoms", "--drill", "loss-spikes", "--seeds", "2"]) == 0
    assert asked == [range(2)]
    printed = capsys.readouterr().out
    assert "loss-spikes, nuisance {'lr': (0.4, 0.45, 0.5)}, seeds 0-1:" in printed
    # The two corrupt batches still look alike; too large a rate and the calm runs now decide,
    # 4 of 8 draws.
    assert "a-loss-that-jumps                stored 0  tried 0.5" in printed
    assert "jumps-after-a-change             stored 0  tried 1" in printed
