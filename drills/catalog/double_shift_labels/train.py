"""The training loop of "Double-shifted labels": a tiny causal LM with its labels built one way.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from drills.catalog.double_shift_labels.evidence import (
    describe_inputs,
    future_influence,
    label_offset,
    labels_equal_inputs,
    pairs_table,
)
from drills.catalog.double_shift_labels.signature import DoubleShiftSignature
from drills.core.contract import DrillError, DrillOutcome, Reporter
from drills.core.curves import tail_mean
from drills.kit.audit import relative_weight_change
from drills.kit.causal_lm import (
    IGNORE,
    CausalTransformer,
    MarkovSource,
    ModelConfig,
    SourceConfig,
    build_targets,
    chance_loss,
    entropy_references,
)
from drills.kit.coin_text import CoinSource
from drills.kit.run import Run


@dataclass(frozen=True)
class DoubleShiftConfig:
    labels: str = "shift-once"
    attention: str = "causal"  # "unmasked": the causal mask left off (see ATTENTION)
    text: str = "two-successors"  # or a fair-draw text (see TEXTS, drills/kit/coin_text.py)
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
    config = DoubleShiftConfig(
        labels=knobs["labels"],
        attention=knobs["attention"],
        steps=knobs["steps"],
        text=knobs["text"],
    )
    run = Run(seed, report)
    # The chain and every batch come from the run's data generator: every label mode sees the
    # same text.
    source_config = SourceConfig()
    source: MarkovSource | CoinSource
    # The letters each draw picks among are named at each branch, the lines the page marks.
    if config.text == "coin-every-letter":
        source = CoinSource(source_config, run.data_rng, sides=2)
        next_entropy, two_step_entropy = source.entropies()
    elif config.text == "dice-every-letter":
        source = CoinSource(source_config, run.data_rng, sides=4)
        next_entropy, two_step_entropy = source.entropies()
    else:
        source = MarkovSource(source_config, run.data_rng)
        next_entropy, two_step_entropy = entropy_references(source)

    model = CausalTransformer(
        ModelConfig(
            vocab=source_config.vocab,
            seq_len=source_config.seq_len,
            causal=config.attention == "causal",
        )
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr, foreach=True)
    run.watch(model, optimizer)

    first = source.sample(config.batch, run.data_rng)
    first_targets = build_targets(first, config.labels)
    counted = first_targets[first_targets != IGNORE]
    signature = DoubleShiftSignature(
        targets_counted=int(counted.numel()),
        prompt_share=share(counted >= source_config.prompt_base, counted != source_config.pad),
        pad_share=share(counted == source_config.pad),
        labels_equal_inputs=labels_equal_inputs(first, first_targets),
        label_offset=label_offset(first, first_targets),
        next_token_entropy=next_entropy,
        two_step_entropy=two_step_entropy,
        seen_token_entropy=0.0,  # a label the model can read has nothing left to guess
        chance_loss=chance_loss(source_config),
    )
    inputs = describe_inputs(first, source)
    tables = [pairs_table(first, first_targets, source_config)]

    if counted.numel() == 0:
        # What the loop would have computed: a mean over zero tokens.
        raw = F.cross_entropy(
            model(first.tokens).reshape(-1, source_config.vocab), first_targets.reshape(-1)
        )
        signature.raw_loss_finite = bool(torch.isfinite(raw))
        message = (
            f"no valid target tokens: all {first_targets.numel()} labels of the batch are "
            f"ignore_index={IGNORE}, so the mean cross-entropy is 0/0 = {raw.item()}; "
            "there is nothing to train on"
        )
        raise DrillError(message, outcome=run.outcome(signature, inputs=inputs, tables=tables))

    batch, targets = first, first_targets
    for step in range(config.steps):
        if step > 0:
            batch = source.sample(config.batch, run.data_rng)
            targets = build_targets(batch, config.labels)
        measured = token_losses(model(batch.tokens), targets, source_config)
        if run.stop_if_nonfinite(step, measured.loss.item()):
            break  # stop rather than plot NaN
        optimizer.zero_grad(set_to_none=True)
        measured.loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr(config.lr, step, config.steps)
        optimizer.step()

        run.log("loss", step, measured.loss.item())
        if measured.response is not None:
            run.log("response_loss", step, measured.response)
        if measured.real is not None:
            run.log("real_token_loss", step, measured.real)

    losses = run.values("loss")
    signature.steps_run = len(losses)
    signature.initial_loss = run.first("loss")
    signature.final_loss = run.tail_mean("loss")
    signature.second_half_drop = second_half_drop(losses)
    signature.real_token_loss = run.tail_mean("real_token_loss")
    signature.response_loss = run.tail_mean("response_loss")
    signature.weight_change = relative_weight_change(run.parameter_rows())
    signature.nonfinite_step = run.nonfinite_step
    signature.raw_loss_finite = run.nonfinite_step is None
    # The trained model, probed on the first batch: do its predictions up to the middle of the
    # response move when the tokens after it change?
    cut = source_config.prompt_length + source_config.min_response // 2
    signature.future_influence = future_influence(model, first.tokens, cut, source_config.vocab)
    return run.outcome(signature, inputs=inputs, tables=tables)


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
