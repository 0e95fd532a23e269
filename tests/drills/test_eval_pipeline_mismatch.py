"""Evaluation pipeline mismatch against its references: the encodings written out by hand, the
healthy run's own evaluation (training does not depend on the evaluation pipeline, so the
re-encoded score of a mismatched run must be that number exactly), chance for four teams, and the
share of held-out tickets whose product the training set contained."""

import functools
from typing import Any

import pytest
import torch

from drills.catalog.eval_pipeline_mismatch import TRAINED
from drills.catalog.eval_pipeline_mismatch.problem import (
    LAUNCH,
    NEW,
    WORDS,
    Ticket,
    WordTokenizer,
    encode_for_evaluation,
    encode_for_training,
    vocabulary_words,
)
from drills.catalog.eval_pipeline_mismatch.train import PipelineConfig, build_data
from drills.core.registry import get_drill
from tests.drills.runs import run_drill

SEEDS = (0, 1, 2, 3, 4)
SLUG = "eval-pipeline-mismatch"
drill = get_drill(SLUG)
MISMATCHES = ("double-start", "no-separator", "no-lowercase")
CHANCE = 0.25
EXPECTED = {
    (): "healthy",
    (("evaluation", "double-start"),): "pipeline-mismatch",
    (("evaluation", "no-separator"),): "pipeline-mismatch",
    (("evaluation", "no-lowercase"),): "pipeline-mismatch",
    (("eval_products", "new"),): "distribution-shift",
    (("train_products", "launch-and-new"),): "healthy",
    (("train_size", 16),): "overfitting",
    (("train_size", 128),): "overfitting",
    (("train_size", 2048),): "healthy",
}


@functools.cache
def run(seed: int = 0, **knobs: Any) -> dict[str, Any]:
    return run_drill(SLUG, knobs, seed)


def signature(seed: int, **knobs: Any) -> dict[str, Any]:
    return run(seed, **knobs)["signature"]  # type: ignore[no-any-return]


TICKET = Ticket("Battery broken again", f"{LAUNCH[0].capitalize()} cable late", 0)


def test_the_encodings_against_the_templates_written_out() -> None:
    tokenizer = WordTokenizer(vocabulary_words(LAUNCH))
    product = LAUNCH[0]
    words = f"battery broken again <sep> {product} cable late".split()
    by_hand = {
        "training": ["<bos>", *words, "<eos>"],
        "double-start": ["<bos>", "<bos>", *words, "<eos>"],
        "no-separator": ["<bos>", *[w for w in words if w != "<sep>"], "<eos>"],
        # Capitalised words are not in the lower-case vocabulary.
        "no-lowercase": ["<bos>", "<unk>", "broken", "again", "<sep>", "<unk>", "cable", "late"]
        + ["<eos>"],
    }
    assert tokenizer.decode(encode_for_training(tokenizer, TICKET)).split() == by_hand["training"]
    for pipeline, tokens in by_hand.items():
        ids = encode_for_evaluation(tokenizer, TICKET, pipeline)
        assert tokenizer.decode(ids).split() == tokens, pipeline
    # A product added later is unknown to the launch tokenizer, whichever pipeline encodes it.
    later = Ticket("Battery broken again", f"{NEW[0].capitalize()} cable late", 0)
    assert tokenizer.decode(encode_for_training(tokenizer, later)).split()[5] == "<unk>"


def test_the_product_lists_are_fixed_disjoint_and_not_ordinary_words() -> None:
    assert len(set(LAUNCH)) == len(LAUNCH) == 128 and len(set(NEW)) == 128
    assert not set(LAUNCH) & set(NEW) and not (set(LAUNCH) | set(NEW)) & set(WORDS)


@pytest.mark.parametrize("seed", SEEDS)
def test_teams_are_balanced_and_every_setting_scores_the_same_evaluation_texts(seed: int) -> None:
    small = build_data(PipelineConfig(train_size=16), torch.Generator().manual_seed(seed))
    large = build_data(PipelineConfig(), torch.Generator().manual_seed(seed))
    assert small.evaluation == large.evaluation
    counts = torch.bincount(large.evaluated[1], minlength=4).tolist()
    assert min(counts) > 0.2 * 512 and max(counts) < 0.3 * 512  # measured 0.22-0.28


@pytest.mark.parametrize("pipeline", MISMATCHES)
@pytest.mark.parametrize("seed", SEEDS)
def test_re_encoding_a_mismatch_recovers_the_healthy_number_exactly(
    pipeline: str, seed: int
) -> None:
    # Training never touches the evaluation pipeline: same seed, same weights. The evaluation
    # texts encoded the training way must score what the healthy run's evaluation scored.
    healthy, broken = signature(seed), signature(seed, evaluation=pipeline)
    assert broken["train_loss"] == healthy["train_loss"]
    assert broken["reencoded_accuracy"] == healthy["eval_accuracy"] == 1.0
    assert broken["reencoded_loss"] == healthy["eval_loss"]
    assert broken["holdout_accuracy"] == healthy["holdout_accuracy"]
    # What the evaluation reports instead: about chance (measured 0.207-0.270).
    assert abs(broken["eval_accuracy"] - CHANCE) < 0.075
    assert broken["eval_loss"] > 100 * healthy["eval_loss"]  # measured 1.4-2.5 against 0.005-0.008
    assert broken["ids_differ_share"] == 1.0


@pytest.mark.parametrize(
    ("pipeline", "length_change", "unknown_share"),
    # Each ticket has 9 tokens the training way; the lower-case vocabulary does not know the
    # capitalised first word of the subject nor the product: 2 of 9.
    [("training", 0.0, 0.0), ("double-start", 1.0, 0.0), ("no-separator", -1.0, 0.0)]
    + [("no-lowercase", 0.0, 2 / 9)],
)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_encoding_numbers_have_their_closed_form(
    pipeline: str, length_change: float, unknown_share: float, seed: int
) -> None:
    sig = signature(seed, evaluation=pipeline)
    assert sig["length_change"] == length_change
    assert sig["unknown_share"] == pytest.approx(unknown_share, abs=1e-12)
    assert sig["reencoded_unknown_share"] == 0.0
    assert sig["ids_differ_share"] == (0.0 if pipeline == "training" else 1.0)


@pytest.mark.parametrize("seed", SEEDS)
def test_new_products_the_same_ids_both_ways_and_chance_on_them(seed: int) -> None:
    sig = signature(seed, eval_products="new")
    assert sig["ids_differ_share"] == 0.0 and sig["length_change"] == 0.0
    # The product, 1 token of 9, is unknown either way.
    assert sig["unknown_share"] == sig["reencoded_unknown_share"] == pytest.approx(1 / 9)
    assert sig["reencoded_accuracy"] == sig["eval_accuracy"]
    assert abs(sig["eval_accuracy"] - CHANCE) < 0.075  # measured 0.238-0.283
    assert sig["holdout_accuracy"] == 1.0
    # Labelled tickets of the new products in training (and their names in the tokenizer).
    fixed = signature(seed, eval_products="new", train_products="launch-and-new")
    assert fixed["eval_accuracy"] >= 0.95  # measured 0.979-1.0


def seen_share(seed: int, train_size: int) -> float:
    """The share of held-out tickets whose product the training tickets contain."""
    data = build_data(PipelineConfig(train_size=train_size), torch.Generator().manual_seed(seed))
    trained = set(data.train[0][:, 5].tolist())  # the product sits after <bos>, 3 words, <sep>
    held = data.holdout[0][:, 5].tolist()
    return sum(product in trained for product in held) / len(held)


@pytest.mark.parametrize("seed", SEEDS)
def test_overfitting_the_held_out_score_is_what_the_seen_products_allow(seed: int) -> None:
    # A model can only know the team of a product it trained on: seen share + the rest at
    # chance. At 128 tickets measured within 0.045 of that (0.68-0.74); at 16, below it (the
    # model also memorises the noise words of 16 tickets: 0.27-0.31).
    for size, band in ((128, 0.08), (16, None)):
        seen = seen_share(seed, size)
        expected = seen + (1 - seen) * CHANCE
        sig = signature(seed, train_size=size)
        assert sig["train_accuracy"] == 1.0 and sig["ids_differ_share"] == 0.0
        if band is None:
            assert sig["holdout_accuracy"] < expected + 0.03
        else:
            assert abs(sig["holdout_accuracy"] - expected) < band
    assert seen_share(seed, 1024) == 1.0 and signature(seed)["holdout_accuracy"] == 1.0


@pytest.mark.parametrize("knobs", [dict(k) for k in EXPECTED], ids=str)
@pytest.mark.parametrize("seed", SEEDS)
def test_diagnose_names_the_variant_on_every_seed(knobs: dict[str, Any], seed: int) -> None:
    assert run(seed, **knobs)["observed"] == EXPECTED[tuple(knobs.items())]


@pytest.mark.parametrize(
    ("knobs", "expected"),
    [
        # The smallest rate and a single step: under half the training tickets right.
        ({"lr": 1e-4}, "inconclusive"),
        ({"steps": 1}, "inconclusive"),
        ({"steps": 1, "evaluation": "no-separator"}, "inconclusive"),
        # The largest rate and the most steps: each variant reads as at the defaults.
        ({"lr": 0.1}, "healthy"),
        ({"lr": 0.1, "evaluation": "no-separator"}, "pipeline-mismatch"),
        ({"lr": 0.1, "train_size": 16}, "overfitting"),
        ({"lr": 0.1, "eval_products": "new"}, "distribution-shift"),
        ({"steps": 400}, "healthy"),
        ({"steps": 400, "evaluation": "double-start"}, "pipeline-mismatch"),
        ({"steps": 400, "train_size": 16}, "overfitting"),
        ({"train_size": 2048, "evaluation": "no-separator"}, "pipeline-mismatch"),
        # Two causes at once: re-encoding does not bring the training number back.
        ({"train_size": 16, "evaluation": "no-lowercase"}, "inconclusive"),
        ({"eval_products": "new", "evaluation": "double-start"}, "inconclusive"),
        ({"eval_products": "new", "train_products": "launch-and-new"}, "healthy"),
    ],
    ids=lambda value: (
        "-".join(f"{v}" for v in value.values()) if isinstance(value, dict) else value
    ),
)
@pytest.mark.parametrize("seed", SEEDS)
def test_the_verdict_holds_at_the_ends_of_each_knob(
    knobs: dict[str, Any], expected: str, seed: int
) -> None:
    assert run(seed, **knobs)["observed"] == expected


def test_the_decoded_pairs_show_both_encodings() -> None:
    record = run(0, evaluation="double-start")
    first = record["inputs"]["examples"][0]
    assert first["evaluation"] == "<bos> " + first["training"]
    assert first["same ids"] is False
    (encodings,) = record["diagnostics"]["tables"]
    assert len(encodings["rows"]) == 6 and all(row[4] is False for row in encodings["rows"])
    assert run(0)["inputs"]["examples"][0]["same ids"] is True


TRAINED_OK = {"train_accuracy": 1.0, "holdout_accuracy": 1.0, "reencoded_accuracy": 1.0}


@pytest.mark.parametrize(
    ("numbers", "expected"),
    [
        ({**TRAINED_OK, "eval_accuracy": 1.0, "ids_differ_share": 0.0}, "healthy"),
        ({**TRAINED_OK, "eval_accuracy": 0.25, "ids_differ_share": 1.0}, "pipeline-mismatch"),
        # The ids differ on a few texts only, and it costs little: not the cause.
        ({**TRAINED_OK, "eval_accuracy": 0.9, "ids_differ_share": 0.1}, "inconclusive"),
        (
            {**TRAINED_OK, "eval_accuracy": 0.25, "reencoded_accuracy": 0.3}
            | {"ids_differ_share": 1.0},
            "inconclusive",
        ),
        (
            {**TRAINED_OK, "eval_accuracy": 0.25, "reencoded_accuracy": 0.25}
            | {"ids_differ_share": 0.0},
            "distribution-shift",
        ),
        (
            {**TRAINED_OK, "holdout_accuracy": 0.3, "eval_accuracy": 0.3}
            | {"reencoded_accuracy": 0.3, "ids_differ_share": 0.0},
            "overfitting",
        ),
        ({**TRAINED_OK, "train_accuracy": TRAINED - 0.01, "eval_accuracy": 0.9}, "inconclusive"),
        (
            {**TRAINED_OK, "eval_accuracy": 0.9, "reencoded_accuracy": 0.9}
            | {"ids_differ_share": 0.0},
            "healthy",
        ),
        ({}, "inconclusive"),
    ],
)
def test_diagnose_reads_the_numbers(numbers: dict[str, Any], expected: str) -> None:
    assert drill.diagnose(numbers, None) == expected
