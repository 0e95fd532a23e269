"""The training loop of "Padding masks": a tiny attention model over padded batches, with the
attention mask and the loss mask each on or off, and the two masks measured after the run.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from drills.catalog.padding_masks.problem import (
    Sequences,
    TinyAttention,
    decoded_examples,
    make_sequences,
    pad_batch,
    sequences_digest,
    token_values,
)
from drills.catalog.padding_masks.signature import PaddingSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run
from drills.kit.tables import table


@dataclass(frozen=True)
class PaddingConfig:
    attention_mask: str = "applied"  # "applied": padding keys masked; "missing": attended to
    loss_mask: str = "real-tokens"  # "real-tokens": padding left out; "all-positions": counted
    pad_to: int = 32  # every batch is padded to this many positions
    steps: int = 150  # Adam steps
    batch_size: int = 32
    lr: float = 0.01
    width: int = 16  # embedding and attention width
    examples: int = 512  # training sequences
    held_out: int = 64  # sequences the trained model is measured on


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train with the chosen masks, then measure both; see PaddingMasks."""
    config = PaddingConfig(
        attention_mask=knobs["attention_mask"],
        loss_mask=knobs["loss_mask"],
        pad_to=knobs["pad_to"],
        steps=knobs["steps"],
    )
    run = Run(seed, report)
    values = token_values(run.data_rng)
    data = make_sequences(config.examples, values, run.data_rng)
    held_out = make_sequences(config.held_out, values, run.data_rng)
    model = TinyAttention(config.width)  # initial weights from the runner's manual_seed
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    # What the code does to padding, before training has had a chance to learn around it.
    signature = PaddingSignature(
        pad_to=config.pad_to,
        first_output_shift=measure_held_out(model, held_out, config).output_shift,
    )
    real = positions = 0

    for step, index in zip(
        range(config.steps), batches(data, config.batch_size, run), strict=False
    ):
        tokens, labels, is_real = pad_batch(data, index, config.pad_to)
        logits = model(tokens, is_real if config.attention_mask == "applied" else None)
        loss = logged_loss(logits, labels, is_real, config.loss_mask)
        real_loss, padding_loss = split_losses(logits, labels, is_real)
        if step == 0:
            counted = counted_positions(loss, logits)
            signature.counted_positions = int(counted.sum())
            signature.counted_padding = int((counted & ~is_real).sum())
            signature.counted_padding_share = signature.counted_padding / max(1, int(counted.sum()))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        if run.stop_if_nonfinite(step, loss.item()):
            break
        optimizer.step()
        real, positions = real + int(is_real.sum()), positions + is_real.numel()
        run.log("loss", step, loss.item())
        run.log("real_token_loss", step, real_loss)
        if padding_loss is not None:
            run.log("padding_loss", step, padding_loss)
        run.log("real_share", step, float(is_real.float().mean()))

    signature.real_share = real / positions if positions else None
    signature.logged_loss = run.tail_mean("loss")
    signature.real_token_loss = run.tail_mean("real_token_loss")
    signature.padding_loss = run.tail_mean("padding_loss")
    if signature.logged_loss is not None and signature.real_token_loss:
        signature.logged_over_real = signature.logged_loss / signature.real_token_loss
    signature.first_logged_loss = run.first("loss")
    signature.first_real_token_loss = run.first("real_token_loss")
    signature.steps_run = len(run.values("loss"))
    signature.nonfinite_step = run.nonfinite_step
    trained = measure_held_out(model, held_out, config)
    signature.output_shift = trained.output_shift
    signature.held_out_loss_padded = trained.loss_padded
    signature.held_out_loss_unpadded = trained.loss_alone
    signature.loss_shift = trained.loss_padded - trained.loss_alone
    signature.held_out_accuracy = trained.accuracy
    inputs = {
        "shapes": {"tokens": [config.batch_size, config.pad_to]},
        "sequences": len(data),
        "sha256": sequences_digest(data),
        "examples": decoded_examples(data, config.pad_to),
    }
    tables = [
        table(
            "held-out",
            "Held-out sequences: each real token's output padded as the loop pads, and alone",
            ["sequence", "real tokens", "padding", "max |logit shift|", "loss padded", "alone"],
            trained.rows,
            note="Alone: the sequence run by itself at its own length, with no padding at all.",
        )
    ]
    return run.outcome(signature, inputs=inputs, tables=tables)


def batches(data: Sequences, size: int, run: Run) -> Iterator[list[int]]:
    """Indices of each batch, drawn in order from shuffled epochs."""
    while True:
        order = torch.randperm(len(data), generator=run.order_rng).tolist()
        for start in range(0, len(data) - size + 1, size):
            yield order[start : start + size]


def logged_loss(
    logits: torch.Tensor, labels: torch.Tensor, is_real: torch.Tensor, loss_mask: str
) -> torch.Tensor:
    """The loss the loop backpropagates: cross-entropy averaged over the real tokens, or over
    every position of the padded batch (padding, labelled PAD, counted like a token)."""
    flat_logits, flat_labels = logits.reshape(-1, logits.shape[-1]), labels.reshape(-1)
    if loss_mask == "all-positions":
        return F.cross_entropy(flat_logits, flat_labels)
    ignored = flat_labels.masked_fill(~is_real.reshape(-1), -100)  # -100: left out of the mean
    return F.cross_entropy(flat_logits, ignored)


@torch.no_grad()
def split_losses(
    logits: torch.Tensor, labels: torch.Tensor, is_real: torch.Tensor
) -> tuple[float, float | None]:
    """Cross-entropy averaged over the real tokens, and over the padding positions (None when
    the batch has none), from the same logits the logged loss was taken from."""
    each = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), labels.reshape(-1), reduction="none"
    )
    real = is_real.reshape(-1)
    padding = each[~real]
    return float(each[real].mean()), float(padding.mean()) if len(padding) else None


def counted_positions(loss: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
    """(batch, length) True where the loss depends on that position's logits: measured with
    autograd, not read from the code's own mask."""
    (gradient,) = torch.autograd.grad(loss, logits, retain_graph=True)
    counted: torch.Tensor = gradient.abs().sum(dim=-1) > 0
    return counted


@dataclass(frozen=True)
class HeldOut:
    """The held-out sequences' real tokens, padded as the loop pads them against each alone."""

    output_shift: float  # max |logit padded - logit alone| over every real token
    loss_padded: float  # cross-entropy per real token, padded
    loss_alone: float  # cross-entropy per real token, each sequence alone
    accuracy: float  # real tokens labelled right, alone
    rows: list[list[Any]]  # the first few sequences, for the table


@torch.no_grad()
def measure_held_out(model: TinyAttention, held_out: Sequences, config: PaddingConfig) -> HeldOut:
    """Run the held-out sequences padded to pad_to (with the loop's attention mask) and each
    alone, unpadded, and compare every real token's logits."""
    index = list(range(len(held_out)))
    tokens, _, is_real = pad_batch(held_out, index, config.pad_to)
    padded = model(tokens, is_real if config.attention_mask == "applied" else None)
    shift, padded_sum, alone_sum, right, count = 0.0, 0.0, 0.0, 0, 0
    rows: list[list[Any]] = []
    for i in index:
        length, labels = len(held_out.tokens[i]), held_out.labels[i]
        # The reference: the sequence by itself, at its own length; no padding, nothing to mask.
        alone = model(held_out.tokens[i][None, :], None)[0]
        mine = padded[i, :length]
        gap = float((mine - alone).abs().max())
        padded_loss = float(F.cross_entropy(mine, labels, reduction="sum"))
        alone_loss = float(F.cross_entropy(alone, labels, reduction="sum"))
        shift = max(shift, gap)
        padded_sum, alone_sum = padded_sum + padded_loss, alone_sum + alone_loss
        right += int((alone.argmax(dim=-1) == labels).sum())
        count += length
        if i < 5:
            padding = config.pad_to - length
            rows.append([i, length, padding, gap, padded_loss / length, alone_loss / length])
    return HeldOut(shift, padded_sum / count, alone_sum / count, right / count, rows)
