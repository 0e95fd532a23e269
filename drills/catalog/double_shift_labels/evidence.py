"""The evidence a run of "Double-shifted labels" shows besides its curves: decoded input → label
pairs, the first batch, and two numbers that tell the ways of seeing the answer apart."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import torch
from torch import nn

from drills.kit.causal_lm import IGNORE, MarkovSource, SourceConfig, TextBatch, decode_token
from drills.kit.coin_text import CoinSource
from drills.kit.tables import table


def labels_equal_inputs(batch: TextBatch, targets: torch.Tensor) -> float | None:
    """Share of the counted labels that are the very token read at their own position.

    Near 1 when nobody shifted the labels (the model is asked to copy what it reads); small
    when they are shifted (a letter is seldom its own successor).
    """
    counted = targets != IGNORE
    total = int(counted.sum())
    if total == 0:
        return None
    return int((counted & (targets == batch.tokens)).sum()) / total


def label_offset(batch: TextBatch, targets: torch.Tensor, furthest: int = 3) -> int | None:
    """How many positions after its own the counted labels sit: the offset at which they match
    the input tokens most often (0: copied, 1: shifted once, 2: shifted twice).

    What a learner reads off the input -> label rows; needed as a number because on a text
    where every letter is a coin flip, two positions ahead costs no more loss than one.
    """
    counted = targets != IGNORE
    if int(counted.sum()) == 0:
        return None
    length = targets.shape[1]
    matches = []
    for offset in range(furthest + 1):
        window = counted[:, : length - offset]
        same = targets[:, : length - offset] == batch.tokens[:, offset:]
        matches.append(int((window & same).sum()))
    return max(range(furthest + 1), key=lambda offset: (matches[offset], -offset))


@torch.no_grad()
def future_influence(model: nn.Module, tokens: torch.Tensor, cut: int, vocab: int) -> float:
    """How far the predictions up to position `cut` move when every token after it changes.

    The largest change of a log-probability (nats) at positions 0..cut. A causal model cannot
    see past its own position, so it gives exactly 0; a model whose causal mask is off reads
    the changed tokens, among them the ones it is scored against, and its predictions jump.
    """
    changed = tokens.clone()
    changed[:, cut + 1 :] = (changed[:, cut + 1 :] + 1) % vocab
    was_training = model.training
    model.eval()
    before = model(tokens)[:, : cut + 1].log_softmax(dim=-1)
    after = model(changed)[:, : cut + 1].log_softmax(dim=-1)
    model.train(was_training)
    return float((before - after).abs().max())


def pairs_table(batch: TextBatch, targets: torch.Tensor, config: SourceConfig) -> dict[str, Any]:
    """Decoded input → label pairs of the first sequence, around its two boundaries."""
    tokens, labels = batch.tokens[0].tolist(), targets[0].tolist()
    end = config.prompt_length + int(batch.response_lengths[0])  # the first PAD
    windows = (
        range(config.prompt_length - 3, config.prompt_length + 5),  # prompt → response
        range(end - 3, min(end + 3, config.seq_len)),  # response → padding
    )
    rows: list[list[Any]] = []
    for number, window in enumerate(windows):
        if number:
            rows.append(["…", "", "", "", ""])
        for t in window:
            part = "pad" if t >= end else "prompt" if t < config.prompt_length else "response"
            label = labels[t]
            rows.append(
                [
                    t,
                    part,
                    decode_token(tokens[t], config),
                    decode_token(label, config),
                    label != IGNORE,
                ]
            )
    return table(
        "input_label_pairs",
        "Decoded input → label pairs (first sequence)",
        ("position", "part", "input", "label", "in loss"),
        rows,
        note=(
            "Each row is one position: the token the model reads there and the label its "
            "prediction is scored against. Correctly shifted, a row's label is the next row's "
            "input. Shown: the end of the prompt and the end of the response."
        ),
    )


def describe_inputs(batch: TextBatch, source: MarkovSource | CoinSource) -> dict[str, Any]:
    c = source.config
    rows = batch.tokens.tolist()
    decoded = ["".join("_" if t == c.pad else decode_token(t, c) for t in row) for row in rows]
    if isinstance(source, CoinSource):
        # No letter has successors: each response position has its own group of letters.
        cycle = len(source.groups)
        groups = {
            f"response letter {index + 1} (and every {cycle}th after)": "".join(
                decode_token(s, c) for s in group
            )
            for index, group in enumerate(source.groups.tolist())
        }
        return {
            "shapes": {"tokens": list(batch.tokens.shape), "vocab": c.vocab},
            "sha256": hashlib.sha256(json.dumps(rows).encode()).hexdigest(),
            "examples": decoded[:3],
            "alphabet": "a-h: prompt letters, A-P: response letters, _: PAD",
            "letters_by_position": groups,
            "letters_to_choose_from": source.sides,
            "response_lengths": batch.response_lengths.tolist(),
        }
    successors = {
        decode_token(letter, c): "".join(decode_token(s, c) for s in pair)
        for letter, pair in enumerate(source.successors.tolist())
    }
    return {
        "shapes": {"tokens": list(batch.tokens.shape), "vocab": c.vocab},
        "sha256": hashlib.sha256(json.dumps(rows).encode()).hexdigest(),
        "examples": decoded[:3],
        "alphabet": "a-h: prompt letters, A-P: response letters, _: PAD",
        "successors": successors,
        "response_lengths": batch.response_lengths.tolist(),
    }
