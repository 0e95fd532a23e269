"""The training loop of "Double-shifted labels": a tiny causal LM with its labels built one way.

Kept apart from the drill's description (drills/double_shift_labels.py) so that only a worker
process that actually trains imports torch.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from drills.core.contract import DrillError, DrillOutcome, Reporter, SignatureValue
from drills.kit.audit import ParameterAudit, relative_weight_change
from drills.kit.causal_lm import (
    IGNORE,
    CausalTransformer,
    MarkovSource,
    ModelConfig,
    SourceConfig,
    TextBatch,
    build_targets,
    chance_loss,
    decode_token,
    entropy_references,
)
from drills.kit.curves import tail_mean
from drills.kit.tables import table

# Every run reports every key (None where a number does not apply), so records line up.
SIGNATURE_KEYS = (
    "targets_counted",
    "prompt_share",
    "pad_share",
    "steps_run",
    "initial_loss",
    "final_loss",
    "second_half_drop",
    "real_token_loss",
    "response_loss",
    "next_token_entropy",
    "two_step_entropy",
    "chance_loss",
    "weight_change",
    "nonfinite_step",
    "raw_loss_finite",
)


@dataclass(frozen=True)
class DoubleShiftConfig:
    labels: str = "shift-once"
    steps: int = 150
    lr: float = 1e-2  # Adam peak learning rate, cosine-decayed to 0 so the plateau is clean
    batch: int = 8


@dataclass(frozen=True)
class TokenLosses:
    """One batch's loss, and the same per-token losses averaged over the tokens that matter."""

    loss: torch.Tensor  # what training minimises: mean over every counted target
    response: float | None  # mean over counted targets that are response letters
    real: float | None  # mean over counted targets that are not PAD


def token_losses(logits: torch.Tensor, targets: torch.Tensor, source: SourceConfig) -> TokenLosses:
    per_token = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        targets.reshape(-1),
        ignore_index=IGNORE,
        reduction="none",
    ).view(targets.shape)  # ignored positions contribute exactly 0
    counted = targets != IGNORE
    # Summing and dividing by the count is what reduction="mean" does with ignore_index.
    loss = per_token.sum() / int(counted.sum())
    detached = per_token.detach()
    response = counted & (targets < source.response_symbols)
    real = counted & (targets != source.pad)
    return TokenLosses(loss, masked_mean(detached, response), masked_mean(detached, real))


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> float | None:
    count = int(mask.sum())
    return float(values[mask].sum()) / count if count else None


def cosine_lr(peak: float, step: int, steps: int) -> float:
    return peak * 0.5 * (1.0 + math.cos(math.pi * step / steps))


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train the tiny causal LM, its labels built as the knob says; see DoubleShiftLabels."""
    config = DoubleShiftConfig(labels=knobs["labels"], steps=knobs["steps"])
    # A private generator: the text depends on the seed only, so every label mode sees the
    # same chain and the same batches.
    generator = torch.Generator().manual_seed(seed)
    source_config = SourceConfig()
    source = MarkovSource(source_config, generator)
    next_entropy, two_step_entropy = entropy_references(source)

    model = CausalTransformer(ModelConfig(vocab=source_config.vocab, seq_len=source_config.seq_len))
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, foreach=True)
    audit = ParameterAudit(model, optimizer)

    first = source.sample(config.batch, generator)
    first_targets = build_targets(first, config.labels)
    counted = first_targets[first_targets != IGNORE]
    signature: dict[str, SignatureValue] = dict.fromkeys(SIGNATURE_KEYS)
    signature |= {
        "targets_counted": int(counted.numel()),
        "prompt_share": share(counted >= source_config.prompt_base, counted != source_config.pad),
        "pad_share": share(counted == source_config.pad),
        "next_token_entropy": next_entropy,
        "two_step_entropy": two_step_entropy,
        "chance_loss": chance_loss(source_config),
    }
    inputs = describe_inputs(first, source)
    tables = [pairs_table(first, first_targets, source_config)]

    if counted.numel() == 0:
        # What the loop would have computed: a mean over zero tokens.
        raw = F.cross_entropy(
            model(first.tokens).reshape(-1, source_config.vocab), first_targets.reshape(-1)
        )
        signature["raw_loss_finite"] = bool(torch.isfinite(raw))
        message = (
            f"no valid target tokens: all {first_targets.numel()} labels of the batch are "
            f"ignore_index={IGNORE}, so the mean cross-entropy is 0/0 = {raw.item()}; "
            "there is nothing to train on"
        )
        diagnostics = {"parameters": audit.rows(), "tables": tables}
        outcome = DrillOutcome(signature, diagnostics, inputs, error=message)
        raise DrillError(message, outcome=outcome)

    losses: list[float] = []
    response_losses: list[float] = []
    real_losses: list[float] = []
    nonfinite_step: int | None = None
    batch, targets = first, first_targets
    for step in range(config.steps):
        if step > 0:
            batch = source.sample(config.batch, generator)
            targets = build_targets(batch, config.labels)
        measured = token_losses(model(batch.tokens), targets, source_config)
        if not math.isfinite(measured.loss.item()):
            nonfinite_step = step  # stop rather than plot NaN
            break
        optimizer.zero_grad(set_to_none=True)
        measured.loss.backward()  # type: ignore[no-untyped-call]
        audit.after_backward()
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr(config.lr, step, config.steps)
        optimizer.step()

        losses.append(measured.loss.item())
        report.metric("loss", step, losses[-1])
        if measured.response is not None:
            response_losses.append(measured.response)
            report.metric("response_loss", step, measured.response)
        if measured.real is not None:
            real_losses.append(measured.real)
            report.metric("real_token_loss", step, measured.real)
        # Flat reference lines, so the chart shows which floor the curves settle on.
        report.metric("reference:next-token entropy", step, next_entropy)
        report.metric("reference:two-step entropy", step, two_step_entropy)

    rows = audit.rows()
    signature |= {
        "steps_run": len(losses),
        "initial_loss": losses[0] if losses else None,
        "final_loss": tail_mean(losses),
        "second_half_drop": second_half_drop(losses),
        "real_token_loss": tail_mean(real_losses),
        "response_loss": tail_mean(response_losses),
        "weight_change": relative_weight_change(rows),
        "nonfinite_step": nonfinite_step,
        "raw_loss_finite": nonfinite_step is None,
    }
    return DrillOutcome(signature, {"parameters": rows, "tables": tables}, inputs)


def second_half_drop(losses: list[float]) -> float | None:
    """How much the loss still fell after mid-run: 1 - final loss / loss around the middle.

    A run that sits on a floor barely moves in its second half; one still on its way down can
    pass through a floor's value by coincidence, and this tells the two apart.
    """
    if len(losses) < 5:
        return None
    middle = losses[int(0.4 * len(losses)) : int(0.6 * len(losses))]
    final = tail_mean(losses)
    assert final is not None
    return 1.0 - final / (sum(middle) / len(middle))


def share(mask: torch.Tensor, among: torch.Tensor | None = None) -> float | None:
    """The fraction of `among` (default: everything) where `mask` holds; None if empty."""
    among = torch.ones_like(mask) if among is None else among
    total = int(among.sum())
    if total == 0:
        return None
    return int((mask & among).sum()) / total


# --- Evidence -----------------------------------------------------------------------------------


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


def describe_inputs(batch: TextBatch, source: MarkovSource) -> dict[str, Any]:
    c = source.config
    rows = batch.tokens.tolist()
    decoded = ["".join("_" if t == c.pad else decode_token(t, c) for t in row) for row in rows]
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
