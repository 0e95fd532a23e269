"""The coin-flip text (drills/kit/coin_text.py) and what the double-shift drill reads from it:
shifting twice and scoring the prompt stay at ln 2, so only where the labels point (the
measured label offset and the prompt's share) tells them from sound labels."""

import math

import pytest
import torch

from drills.catalog.double_shift_labels.evidence import label_offset
from drills.kit.causal_lm import SourceConfig, build_targets
from drills.kit.coin_text import CoinSource
from tests.drills.runs import run_drill

LN2 = math.log(2)
CONFIG = SourceConfig()


def sample(seed: int = 0, count: int = 64) -> tuple[CoinSource, torch.Tensor, torch.Tensor]:
    generator = torch.Generator().manual_seed(seed)
    source = CoinSource(CONFIG, generator)
    batch = source.sample(count, generator)
    return source, batch.tokens, batch.response_lengths


def test_every_position_holds_one_of_its_own_two_letters() -> None:
    source, tokens, lengths = sample()
    assert set(lengths.tolist()) == {CONFIG.min_response, CONFIG.min_response + 1}
    for row, length in zip(tokens.tolist(), lengths.tolist(), strict=True):
        prompt = row[: CONFIG.prompt_length]
        for index, letter in enumerate(prompt):
            assert letter - CONFIG.prompt_base in {(2 * index) % 8, (2 * index) % 8 + 1}
        assert prompt[0] - CONFIG.prompt_base == length - CONFIG.min_response
        response = row[CONFIG.prompt_length : CONFIG.prompt_length + length]
        pairs = source.pairs.tolist()
        for index, letter in enumerate(response):
            assert letter in pairs[index % len(pairs)]
        assert all(t == CONFIG.pad for t in row[CONFIG.prompt_length + length :])


def test_both_floors_are_ln2() -> None:
    source, _, _ = sample()
    assert source.entropies() == pytest.approx((LN2, LN2))


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
def test_the_label_offset_is_read_off_the_batch(mode: str, offset: int) -> None:
    generator = torch.Generator().manual_seed(1)
    batch = CoinSource(CONFIG, generator).sample(8, generator)
    assert label_offset(batch, build_targets(batch, mode)) == offset


@pytest.mark.parametrize(
    ("labels", "verdict"),
    [
        ("shift-once", "shifted-once"),
        ("shift-twice", "two-step"),
        ("prompt-in-loss", "prompt-counted"),
    ],
)
def test_on_coin_text_three_label_modes_settle_at_ln2_and_are_told_apart(
    labels: str, verdict: str
) -> None:
    record = run_drill(
        "double-shift-labels", {"labels": labels, "text": "coin-every-letter", "steps": 300}, 1
    )
    sig = record["signature"]
    assert sig["final_loss"] == pytest.approx(LN2, rel=0.05)
    assert sig["response_loss"] == pytest.approx(LN2, rel=0.05)
    assert record["observed"] == verdict
