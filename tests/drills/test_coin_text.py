"""The fair-draw texts (drills/kit/coin_text.py) and what the double-shift drill reads from them:
on the coin, shifting twice and scoring the prompt stay at ln 2, and on the four-sided die at
ln 4, so only where the labels point (the measured label offset and the prompt's share) tells
them from sound labels."""

import math

import pytest
import torch

from drills.catalog.double_shift_labels import TEXTS
from drills.catalog.double_shift_labels.evidence import describe_inputs, label_offset
from drills.kit.causal_lm import SourceConfig, build_targets
from drills.kit.coin_text import CoinSource
from tests.drills.runs import run_drill

LN2 = math.log(2)
CONFIG = SourceConfig()


def sample(
    seed: int = 0, count: int = 64, sides: int = 2
) -> tuple[CoinSource, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    source = CoinSource(CONFIG, generator, sides)
    batch = source.sample(count, generator)
    return source, batch.tokens, batch.response_lengths


@pytest.mark.parametrize("sides", [2, 4])
def test_every_position_holds_one_of_its_own_letters(sides: int) -> None:
    source, tokens, lengths = sample(sides=sides)
    groups = source.groups.tolist()
    assert sorted(letter for group in groups for letter in group) == list(range(16))
    assert all(len(group) == sides for group in groups)
    assert set(lengths.tolist()) == {CONFIG.min_response, CONFIG.min_response + 1}
    seen: set[int] = set()
    for row, length in zip(tokens.tolist(), lengths.tolist(), strict=True):
        prompt = row[: CONFIG.prompt_length]
        for index, letter in enumerate(prompt):
            start = (sides * index) % 8
            assert start <= letter - CONFIG.prompt_base < start + sides
        # The first letter's parity within its group sets the length.
        assert (prompt[0] - CONFIG.prompt_base) % 2 == length - CONFIG.min_response
        response = row[CONFIG.prompt_length : CONFIG.prompt_length + length]
        for index, letter in enumerate(response):
            assert letter in groups[index % len(groups)]
        seen.update(response[: len(groups)])
        assert all(t == CONFIG.pad for t in row[CONFIG.prompt_length + length :])
    assert seen == set(range(16))  # every letter of every group is drawn


def test_the_die_draws_its_four_letters_evenly() -> None:
    source, tokens, lengths = sample(count=4000, sides=4)
    first = tokens[:, CONFIG.prompt_length]
    counts = torch.bincount(first, minlength=16)[source.groups[0]]
    assert counts.sum() == 4000
    assert all(abs(int(count) - 1000) < 100 for count in counts)  # sd 27: under 3.7 sd off
    assert abs(int(lengths.eq(CONFIG.min_response).sum()) - 2000) < 100  # sd 32


@pytest.mark.parametrize("sides", [0, 1, 3, 5])
def test_a_draw_that_does_not_split_the_letters_is_refused(sides: int) -> None:
    with pytest.raises(ValueError, match=f"^{sides} sides do not split the 8 prompt letters"):
        CoinSource(CONFIG, torch.Generator().manual_seed(0), sides)


def test_the_inputs_shown_name_each_positions_letters() -> None:
    generator = torch.Generator().manual_seed(0)
    source = CoinSource(CONFIG, generator, 4)
    shown = describe_inputs(source.sample(8, generator), source)
    assert shown["letters_to_choose_from"] == 4
    assert len(shown["letters_by_position"]) == 4
    assert "response letter 1 (and every 4th after)" in shown["letters_by_position"]
    assert all(len(letters) == 4 for letters in shown["letters_by_position"].values())


@pytest.mark.parametrize(("sides", "floor"), [(2, LN2), (4, 2 * LN2)])
def test_both_floors_are_ln_of_the_sides(sides: int, floor: float) -> None:
    source, _, _ = sample(sides=sides)
    assert source.entropies() == pytest.approx((floor, floor))


@pytest.mark.parametrize(
    ("mode", "offset"),
    [
        ("no-shift", 0),
        ("shift-once", 1),
        ("pad-in-loss", 1),
        ("prompt-in-loss", 1),
        ("shift-twice", 2),
    ],
)
@pytest.mark.parametrize("sides", [2, 4])
def test_the_label_offset_is_read_off_the_batch(mode: str, offset: int, sides: int) -> None:
    generator = torch.Generator().manual_seed(1)
    batch = CoinSource(CONFIG, generator, sides).sample(8, generator)
    assert label_offset(batch, build_targets(batch, mode)) == offset


@pytest.mark.parametrize(
    ("text", "floor"), [("coin-every-letter", LN2), ("dice-every-letter", 2 * LN2)]
)
@pytest.mark.parametrize(
    ("labels", "verdict"),
    [
        ("shift-once", "shifted-once"),
        ("shift-twice", "two-step"),
        ("prompt-in-loss", "prompt-counted"),
    ],
)
def test_three_label_modes_settle_at_the_texts_floor_and_are_told_apart(
    text: str, floor: float, labels: str, verdict: str
) -> None:
    """On the die, where labels two ahead settle on the two-successor text: the loss alone
    names nothing."""
    record = run_drill("double-shift-labels", {"labels": labels, "text": text, "steps": 300}, 1)
    sig = record["signature"]
    assert sig["next_token_entropy"] == pytest.approx(floor)
    assert sig["final_loss"] == pytest.approx(floor, rel=0.05)
    assert sig["response_loss"] == pytest.approx(floor, rel=0.05)
    assert record["observed"] == verdict


def test_on_the_die_padding_counted_ends_near_ln2_and_still_reads_as_padding() -> None:
    """Counted padding pulls the die's ln 4 down to about where a sound loop ends on the other
    texts: read against the run's own floor, it is padding, not a sound loop."""
    record = run_drill(
        "double-shift-labels", {"labels": "pad-in-loss", "text": "dice-every-letter"}, 1
    )
    sig = record["signature"]
    assert sig["final_loss"] == pytest.approx(LN2, rel=0.15)
    assert sig["real_token_loss"] == pytest.approx(2 * LN2, rel=0.05)
    assert record["observed"] == "pad-counted"


@pytest.mark.parametrize("text", TEXTS[1:])
def test_a_short_run_on_a_fair_draw_text_sits_on_no_floor(text: str) -> None:
    """Ten steps in, the loss is still over a sixth above the text's floor (coin 0.998 against
    ln 2, die 1.848 against ln 4, seed 0): on no floor, whatever the text."""
    record = run_drill("double-shift-labels", {"text": text, "steps": 10}, 0)
    sig = record["signature"]
    assert sig["final_loss"] > 1.15 * sig["next_token_entropy"]
    assert record["observed"] == "not-converged"
