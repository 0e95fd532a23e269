"""Variable-length losses against their references: a perfect model built from the source's own
successor table (its per-token corpus mean and mean of batch means are the closed forms), the
closed-form relation between a mean of batch means and the per-token mean, and the logged loss
over the batch's per-token mean, which for a sum over a fixed divisor is tokens / divisor."""

import functools
import math
from typing import Any

import pytest
import torch
from torch import nn

from drills.catalog.variable_length_loss.measure import correlation, relation_gap
from drills.catalog.variable_length_loss.problem import (
    BOS,
    TOKEN_BUDGET,
    VOCAB,
    best_batch_means,
    best_per_token,
    by_length,
    draw_lengths,
    draw_sequence,
    shuffled,
    successor_table,
)
from drills.catalog.variable_length_loss.train import corpus_per_token, evaluate
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2, 3, 4)
SLUG = "variable-length-loss"
drill = get_drill(SLUG)
EXPECTED = {
    (): "per-token",
    (("reduction", "sum-per-sequence"),): "token-sum",
    (("reduction", "sum-per-budget"),): "token-sum",
    (("evaluation", "batch-means"),): "batch-means",  # 5.1-5.9% off on batches cut by length
    (("evaluation", "batch-means"), ("eval_batching", "shuffled")): "batch-means",  # 1.3-2.5%
    (("eval_batching", "shuffled"),): "per-token",  # a per-token mean ignores the batching
    (("lengths", "equal"),): "per-token",
    (("lengths", "equal"), ("evaluation", "batch-means")): "per-token",  # equal batches
    (("lengths", "equal"), ("reduction", "sum-per-budget")): "per-token",  # 64 = every batch
    (("lengths", "equal"), ("reduction", "sum-per-sequence")): "token-sum",  # 8 x the mean
    (("bad_batch", "on"),): "bad-batch",
    (("bad_batch", "on"), ("lengths", "equal")): "bad-batch",
    (("bad_batch", "on"), ("reduction", "sum-per-budget")): "token-sum",
}


@functools.cache
def run(seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run_drill(SLUG, knobs, seed)


def signature(seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run(seed, **knobs)["signature"]  # type: ignore[no-any-return]


def series(record: dict[str, Any], metric: str) -> list[float]:
    return [value for _, value in record["metrics"][metric]]


class PerfectModel(nn.Module):
    """The source's own conditional probabilities as logits: uniform after BOS, the two
    successors equally likely after each token (every other token 60 nats down)."""

    def __init__(self, table: torch.Tensor) -> None:
        super().__init__()
        logits = torch.full((BOS + 1, VOCAB), -60.0)
        logits[BOS] = 0.0
        for token in range(VOCAB):
            logits[token, table[token]] = 0.0
        self.logits = logits

    def forward(self, inputs: torch.Tensor) -> torch.Tensor:
        return self.logits[inputs]


@pytest.mark.parametrize("lengths", ["mixed", "equal"])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_perfect_model_reaches_the_closed_forms(lengths: str, seed: int) -> None:
    # The floor and the mean of batch means a perfect model gets, measured with the drill's own
    # evaluation code, against the closed forms ln 16 + (L - 1) ln 2 per sequence.
    generator = torch.Generator().manual_seed(seed)
    table = successor_table(generator)
    sequences = [draw_sequence(n, table, generator) for n in draw_lengths(lengths, generator)]
    model = PerfectModel(table)
    floor = best_per_token([len(s) for s in sequences])
    assert corpus_per_token(model, sequences) == pytest.approx(floor, rel=1e-6)
    for batches in (by_length(sequences), shuffled(sequences, generator)):
        per_token, means = evaluate(model, batches, "per-token")
        assert per_token == pytest.approx(floor, rel=1e-6)
        batch_means, _ = evaluate(model, batches, "batch-means")
        assert batch_means == pytest.approx(
            best_batch_means([b.lengths for b in batches]), rel=1e-6
        )
        # The closed-form relation: mean of batch means - per-token mean = -Cov(T, m) / mean(T).
        tokens = [b.tokens for b in batches]
        assert batch_means - per_token == pytest.approx(relation_gap(tokens, means), abs=1e-6)
    if lengths == "equal":
        assert best_batch_means([b.lengths for b in by_length(sequences)]) == pytest.approx(floor)
    else:
        # Short sequences are harder per token: cut by length, the batch means overweight them.
        assert best_batch_means([b.lengths for b in by_length(sequences)]) > 1.04 * floor


@pytest.mark.parametrize("reduction", ["token-mean", "sum-per-sequence", "sum-per-budget"])
@pytest.mark.parametrize("seed", SEEDS)
def test_the_logged_loss_is_the_per_token_mean_times_tokens_over_the_divisor(
    reduction: str, seed: int
) -> None:
    record = run(seed, reduction=reduction)
    divisor = {"token-mean": None, "sum-per-sequence": 8, "sum-per-budget": TOKEN_BUDGET}[reduction]
    logged, per_token = series(record, "loss"), series(record, "per_token")
    tokens = series(record, "tokens")
    for value, mean, count in zip(logged, per_token, tokens, strict=True):
        expected = 1.0 if divisor is None else count / divisor
        assert value / mean == pytest.approx(expected, rel=1e-5)  # measured: within 1e-6
    sig = record["signature"]
    if divisor is not None:
        assert sig["divisor_min"] == pytest.approx(divisor, rel=1e-5)
        assert sig["divisor_max"] == pytest.approx(divisor, rel=1e-5)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_sum_follows_the_token_count_and_its_spike_is_the_long_batch(seed: int) -> None:
    for reduction in ("sum-per-sequence", "sum-per-budget"):
        sig = signature(seed, reduction=reduction)
        assert sig["loss_tokens_correlation"] > 0.99  # measured: 0.9990-0.9994
        assert sig["spike_is_longest"] is True and sig["spike_tokens"] == sig["tokens_max"]
        assert sig["spike_ratio"] > 3.0  # measured: 4.5-4.8 times the median
        assert sig["spike_per_token_ratio"] < 1.0  # per token, the long batch is easier
    healthy = signature(seed)
    # Per token the correlation is negative: short sequences are harder (measured -0.83 to -0.95).
    assert healthy["loss_tokens_correlation"] < -0.3
    assert healthy["spike_is_longest"] is False
    assert healthy["spike_per_token_ratio"] < 1.5  # measured: at most 1.08


@pytest.mark.parametrize("seed", SEEDS)
def test_the_per_token_corpus_mean_settles_near_the_floor(seed: int) -> None:
    sig = signature(seed)
    # Measured 1.04-1.06 times the floor (a perfect model's): 8 epochs of 1,300 tokens.
    assert sig["best_per_token"] < sig["eval_per_token"] < 1.1 * sig["best_per_token"]
    assert sig["initial_eval_per_token"] > 2.5 * sig["best_per_token"]
    # The batched per-token evaluation and the one-sequence-at-a-time mean are one number.
    assert sig["eval_number"] == pytest.approx(sig["eval_per_token"], rel=1e-6)


@pytest.mark.parametrize("batching", ["by-length", "shuffled"])
@pytest.mark.parametrize("seed", SEEDS)
def test_a_mean_of_batch_means_against_the_closed_form_relation(batching: str, seed: int) -> None:
    record = run(seed, evaluation="batch-means", eval_batching=batching)
    sig = record["signature"]
    (eval_table,) = [t for t in record["diagnostics"]["tables"] if t["key"] == "eval-batches"]
    tokens = [row[0] for row in eval_table["rows"]]
    means = [row[1] for row in eval_table["rows"]]
    assert sig["eval_number"] == pytest.approx(sig["eval_batch_means"], rel=1e-9)
    assert sig["eval_number"] - sig["eval_per_token"] == pytest.approx(
        relation_gap(tokens, means), abs=1e-5
    )
    # The trained model's gap against a perfect model's (the closed form): measured 0.91-1.09 x.
    gap, best_gap = sig["eval_gap"], sig["best_batch_means"] / sig["best_per_token"] - 1
    assert 0.8 * best_gap < gap < 1.25 * best_gap
    low = 0.03 if batching == "by-length" else 0.01  # measured: 0.051-0.059, 0.013-0.025
    assert gap > low
    # The per-token mean does not depend on the batching at all.
    assert sig["eval_per_token"] == signature(seed)["eval_per_token"]


@pytest.mark.parametrize(
    "variant", list(EXPECTED), ids=lambda v: "-".join(b for _, b in v) or "defaults"
)
@pytest.mark.parametrize("seed", SEEDS)
def test_diagnose_names_the_variant_on_every_seed(
    variant: tuple[tuple[str, str], ...], seed: int
) -> None:
    assert run(seed, **dict(variant))["observed"] == EXPECTED[variant]


EDGES = [{"epochs": 3}, {"epochs": 20}, {"lr": 0.005}, {"lr": 0.05}]


@pytest.mark.parametrize(
    "variant",
    [
        (),
        (("reduction", "sum-per-sequence"),),
        (("reduction", "sum-per-budget"),),
        (("evaluation", "batch-means"),),
        (("evaluation", "batch-means"), ("eval_batching", "shuffled")),
        (("lengths", "equal"),),
        (("bad_batch", "on"),),
    ],
    ids=lambda v: "-".join(b for _, b in v) or "defaults",
)
@pytest.mark.parametrize("edge", EDGES, ids=lambda e: "-".join(f"{k}={v}" for k, v in e.items()))
@pytest.mark.parametrize("seed", SEEDS)
def test_the_verdict_holds_at_the_ends_of_each_knob(
    variant: tuple[tuple[str, str], ...], edge: dict[str, Any], seed: int
) -> None:
    assert run(seed, **dict(variant), **edge)["observed"] == EXPECTED[variant]


@pytest.mark.parametrize("seed", SEEDS)
def test_a_broken_batch_stands_out_per_token_and_is_not_the_long_one(seed: int) -> None:
    sig = signature(seed, bad_batch="on")
    assert sig["spike_per_token_ratio"] > 2.5  # measured: 3.0-3.3 times the median
    assert sig["spike_is_longest"] is False


def test_every_variant_sees_the_same_data() -> None:
    records = [
        run(0, **dict(variant)) for variant in EXPECTED if ("lengths", "equal") not in variant
    ]
    assert len({record["inputs"]["sha256"] for record in records}) == 1


def test_correlation_needs_variation() -> None:
    assert correlation([1.0, 1.0, 1.0], [1.0, 2.0, 3.0]) is None
    assert correlation([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0)


PER_TOKEN = {"ratio_min": 1.0, "ratio_max": 1.0, "divisor_min": 16.0, "divisor_max": 380.0}
EVAL = {"eval_number": 0.95, "eval_per_token": 0.95, "eval_batch_means": 1.1, "best_per_token": 0.9}


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({**PER_TOKEN, **EVAL, "spike_per_token_ratio": 1.6}, "per-token"),
        ({**PER_TOKEN, **EVAL, "spike_per_token_ratio": 3.0}, "bad-batch"),
        ({**PER_TOKEN, **EVAL, "eval_number": 1.1}, "batch-means"),
        # Off the per-token mean, but not the mean of batch means either: something else.
        ({**PER_TOKEN, **EVAL, "eval_number": 1.0}, "inconclusive"),
        ({**PER_TOKEN, **EVAL, "eval_number": 1.2, "eval_per_token": 1.2}, "inconclusive"),
        (
            {"ratio_min": 0.25, "ratio_max": 6.0, "divisor_min": 64.0, "divisor_max": 64.0},
            "token-sum",
        ),
        ({"ratio_min": 8.0, "ratio_max": 8.0, "divisor_min": 8.0, "divisor_max": 8.0}, "token-sum"),
        # Neither the per-token mean nor one fixed divisor.
        (
            {"ratio_min": 0.5, "ratio_max": 2.0, "divisor_min": 30.0, "divisor_max": 60.0},
            "inconclusive",
        ),
        ({}, "inconclusive"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected


def test_the_floor_is_ln16_then_ln2() -> None:
    assert best_per_token([1]) == pytest.approx(math.log(16))
    assert best_per_token([4, 4]) == pytest.approx((math.log(16) + 3 * math.log(2)) / 4)
