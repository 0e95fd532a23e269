"""Padding masks against their references: each sequence run alone with no padding (what the
attention mask must reproduce), the cross-entropy written as a plain loop over positions (what
the loss mask must average), and the closed form of a loss that counts padding: each step's
logged loss is s x the real tokens' loss + (1 - s) x the padding's, s the real share."""

import functools
import math
from typing import Any

import pytest
import torch

from drills.catalog.padding_masks import MOVED_OUTPUT, SAME_OUTPUT, SAME_TRAINED_OUTPUT
from drills.catalog.padding_masks.problem import (
    TinyAttention,
    make_sequences,
    pad_batch,
    token_values,
)
from drills.catalog.padding_masks.train import counted_positions, logged_loss
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2, 3, 4)
SLUG = "padding-masks"
drill = get_drill(SLUG)
EXPECTED = {
    ("applied", "real-tokens"): "healthy",
    ("applied", "all-positions"): "pad-counted",
    ("missing", "real-tokens"): "pad-attended",
    ("missing", "all-positions"): "pad-attended-and-counted",
}


@functools.cache
def run(attention: str, loss: str, seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run_drill(SLUG, {"attention_mask": attention, "loss_mask": loss, **knobs}, seed)


def signature(attention: str, loss: str, seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run(attention, loss, seed, **knobs)["signature"]  # type: ignore[no-any-return]


def batch(seed: int, pad_to: int = 32) -> tuple[Any, ...]:
    generator = torch.Generator().manual_seed(seed)
    data = make_sequences(8, token_values(generator), generator)
    return (data, *pad_batch(data, list(range(8)), pad_to))


@pytest.mark.parametrize("pad_to", [16, 128])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_masked_attention_is_each_sequence_alone(seed: int, pad_to: int) -> None:
    # The reference written the slow way: every sequence on its own, at its own length.
    torch.manual_seed(seed)
    model = TinyAttention(16)
    data, tokens, _, is_real = batch(seed, pad_to)
    with torch.no_grad():
        masked, unmasked = model(tokens, is_real), model(tokens, None)
        for i, sequence in enumerate(data.tokens):
            alone = model(sequence[None, :], None)[0]
            assert (masked[i, : len(sequence)] - alone).abs().max() < 1e-5
            if len(sequence) < pad_to:  # a sequence of 16 has no padding at pad_to = 16
                assert (unmasked[i, : len(sequence)] - alone).abs().max() > 1e-3


@pytest.mark.parametrize("seed", SEEDS)
def test_the_two_losses_against_a_loop_over_positions(seed: int) -> None:
    torch.manual_seed(seed)
    _, tokens, labels, is_real = batch(seed)
    logits = TinyAttention(16)(tokens, is_real)
    per_position = [
        [-float(torch.log_softmax(logits[b, t].detach(), dim=-1)[labels[b, t]]) for t in range(32)]
        for b in range(len(tokens))
    ]
    real = [v for b, row in enumerate(per_position) for t, v in enumerate(row) if is_real[b, t]]
    everything = [v for row in per_position for v in row]
    masked = logged_loss(logits, labels, is_real, "real-tokens")
    counted = logged_loss(logits, labels, is_real, "all-positions")
    assert masked.item() == pytest.approx(sum(real) / len(real), rel=1e-5)
    assert counted.item() == pytest.approx(sum(everything) / len(everything), rel=1e-5)
    # Autograd finds the positions each loss depends on: the real ones, or all of them.
    assert torch.equal(counted_positions(masked, logits), is_real)
    assert bool(counted_positions(counted, logits).all())


@pytest.mark.parametrize(("attention", "loss"), list(EXPECTED))
@pytest.mark.parametrize("seed", SEEDS)
def test_diagnose_names_the_variant_on_every_seed(attention: str, loss: str, seed: int) -> None:
    assert run(attention, loss, seed)["observed"] == EXPECTED[(attention, loss)]


@pytest.mark.parametrize("pad_to", [16, 128])
@pytest.mark.parametrize("steps", [1, 300])
@pytest.mark.parametrize(("attention", "loss"), list(EXPECTED))
@pytest.mark.parametrize("seed", SEEDS)
def test_the_verdict_holds_at_the_ends_of_each_knob(
    attention: str, loss: str, steps: int, pad_to: int, seed: int
) -> None:
    record = run(attention, loss, seed, steps=steps, pad_to=pad_to)
    assert record["observed"] == EXPECTED[(attention, loss)]


@pytest.mark.parametrize("pad_to", [16, 32, 64, 128])
@pytest.mark.parametrize("seed", SEEDS)
def test_padding_moves_outputs_only_without_the_attention_mask(pad_to: int, seed: int) -> None:
    for loss in ("real-tokens", "all-positions"):
        masked = signature("applied", loss, seed, pad_to=pad_to)
        # Measured: at most 3.6e-7 untrained and 4.8e-6 trained: float rounding.
        assert masked["first_output_shift"] <= SAME_OUTPUT
        assert masked["output_shift"] <= SAME_TRAINED_OUTPUT
        assert abs(masked["loss_shift"]) < 1e-6
        # Measured: 0.18 to 0.96 of a logit untrained (pad_to 16-128).
        assert signature("missing", loss, seed, pad_to=pad_to)["first_output_shift"] >= 0.1
    # Trained without the mask on the real tokens only, the model still leans on padding: the
    # same held-out sequences score differently padded and alone (measured 0.001-0.99 nats at
    # pad_to >= 32).
    unmasked = signature("missing", "real-tokens", seed, pad_to=pad_to)
    assert unmasked["output_shift"] >= MOVED_OUTPUT
    if pad_to >= 32:
        assert abs(unmasked["loss_shift"]) > 1e-3


@pytest.mark.parametrize("pad_to", [16, 32, 64, 128])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_logged_loss_against_the_real_tokens_loss(pad_to: int, seed: int) -> None:
    healthy = run("applied", "real-tokens", seed, pad_to=pad_to)
    # The same mean, taken twice (by the loss and by the split): equal to float rounding,
    # measured within 5e-8.
    assert healthy["signature"]["logged_over_real"] == pytest.approx(1.0, abs=1e-6)
    for (_, logged), (_, real) in zip(
        healthy["metrics"]["loss"], healthy["metrics"]["real_token_loss"], strict=True
    ):
        assert logged == pytest.approx(real, rel=1e-6)
    assert healthy["signature"]["counted_padding"] == 0
    counted = run("applied", "all-positions", seed, pad_to=pad_to)
    sig, metrics = counted["signature"], counted["metrics"]
    # Every step, the closed form: logged = s x real + (1 - s) x padding.
    for (_, logged), (_, real), (_, pad), (_, share) in zip(
        metrics["loss"],
        metrics["real_token_loss"],
        metrics["padding_loss"],
        metrics["real_share"],
        strict=True,
    ):
        assert logged == pytest.approx(share * real + (1 - share) * pad, rel=1e-5)
    # The first step counted every position of the batch: 32 x pad_to, padding at 1 - s.
    assert sig["counted_positions"] == 32 * pad_to
    assert sig["counted_padding_share"] == pytest.approx(1 - metrics["real_share"][0][1])
    # The real share against its closed form, the mean length (about 10) over pad_to.
    assert sig["real_share"] == pytest.approx(10.0 / pad_to, rel=0.04)
    # Once the padding is learned (its loss under a tenth of the real tokens'; measured 0.1-6%),
    # the logged loss is about the real share of the real tokens' loss (measured within 0.021;
    # both are the last 10% of steps, whose share strays a little from the run's).
    assert sig["padding_loss"] < 0.1 * sig["real_token_loss"]
    assert sig["logged_over_real"] == pytest.approx(sig["real_share"], abs=0.03)


@pytest.mark.parametrize("seed", SEEDS)
def test_counted_padding_lowers_the_logged_loss_not_the_real_tokens_loss(seed: int) -> None:
    runs = [signature("applied", "all-positions", seed, pad_to=p) for p in (16, 32, 64, 128)]
    logged = [sig["logged_loss"] for sig in runs]
    real = [sig["real_token_loss"] for sig in runs]
    # More padding, a lower logged loss at every step up: 16 to 128 takes it at least 3.2 times
    # lower (the share falls 8 times; the real tokens' loss, weighted less, trains more slowly).
    assert all(later < earlier for earlier, later in zip(logged, logged[1:], strict=False))
    assert logged[-1] < logged[0] / 3
    # The real tokens' loss is not lower at 128 than at 16: the padding took the loss's weight.
    assert real[-1] > real[0]
    healthy = [
        signature("applied", "real-tokens", seed, pad_to=p)["logged_loss"] for p in (16, 128)
    ]
    assert healthy[1] == pytest.approx(healthy[0], rel=1e-4)  # masked: padding changes nothing


def test_every_variant_sees_the_same_data_and_starts_from_the_same_model() -> None:
    records = [run(attention, loss) for attention, loss in EXPECTED]
    assert len({record["inputs"]["sha256"] for record in records}) == 1
    masked = [run("applied", loss)["signature"] for loss in ("real-tokens", "all-positions")]
    assert masked[0]["first_output_shift"] == masked[1]["first_output_shift"]
    assert masked[0]["first_real_token_loss"] == masked[1]["first_real_token_loss"]


def test_the_held_out_table_compares_padded_and_alone() -> None:
    (held_out,) = run("missing", "real-tokens")["diagnostics"]["tables"]
    assert len(held_out["rows"]) == 5
    assert all(row[1] + row[2] == 32 for row in held_out["rows"])
    assert all(row[3] > 0 for row in held_out["rows"])


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({"first_output_shift": 3e-7, "output_shift": 4e-6, "counted_padding": 0}, "healthy"),
        ({"first_output_shift": 3e-7, "output_shift": 4e-6, "counted_padding": 700}, "pad-counted"),
        ({"first_output_shift": 0.4, "output_shift": 5.0, "counted_padding": 0}, "pad-attended"),
        # Trained to give padding almost no weight: the code still lets it in.
        (
            {"first_output_shift": 0.4, "output_shift": 3e-5, "counted_padding": 700},
            "pad-attended-and-counted",
        ),
        ({"first_output_shift": 1e-4, "output_shift": 1e-4, "counted_padding": 0}, "inconclusive"),
        # Masked at the start, moved after training: not a mask this drill knows.
        ({"first_output_shift": 3e-7, "output_shift": 0.5, "counted_padding": 0}, "inconclusive"),
        ({"first_output_shift": math.nan, "counted_padding": 0}, "inconclusive"),
        ({}, "inconclusive"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected
