"""The training loop of "Variable-length losses": a bigram token model on padded sequences of
varied lengths, the loss reduced as the chosen variant does, every batch's per-token mean
measured beside what the loop logs, and an evaluation number set beside the per-token corpus
mean computed one sequence at a time.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.variable_length_loss import measure
from drills.catalog.variable_length_loss.problem import (
    BATCH,
    BATCHES,
    BOS,
    IGNORE,
    TOKEN_BUDGET,
    VOCAB,
    Batch,
    best_batch_means,
    best_per_token,
    by_length,
    corrupt,
    decoded,
    draw_lengths,
    draw_sequence,
    long_bucket,
    sequences_digest,
    shuffled,
    successor_table,
)
from drills.catalog.variable_length_loss.signature import VariableLengthSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run
from drills.kit.tables import table


@dataclass(frozen=True)
class LengthConfig:
    reduction: str = "token-mean"  # how a batch's token losses become the loss (REDUCTIONS)
    evaluation: str = "per-token"  # how the evaluation batches become one number (EVALUATIONS)
    eval_batching: str = "by-length"  # how the evaluation set is cut into batches
    lengths: str = "mixed"  # mixed: ordinary lengths and a batch of long documents; equal
    bad_batch: str = "off"  # on: one ordinary training batch has shifted labels
    epochs: int = 8  # passes over the 16 training batches, in one fixed order
    lr: float = 0.02  # Adam: the logged loss's scale does not set the step size
    width: int = 32  # embedding width of the bigram model


def make_model(width: int) -> nn.Module:
    """Each input token's embedding read out as logits over the next token: a bigram model,
    which can reach the source's floor (it needs only the token before)."""
    return nn.Sequential(nn.Embedding(BOS + 1, width), nn.Linear(width, VOCAB))


def token_losses(model: nn.Module, batch: Batch) -> torch.Tensor:
    """(B, Lmax) cross-entropy of every position; 0 at padding (ignored)."""
    logits = model(batch.inputs)
    return F.cross_entropy(
        logits.transpose(1, 2), batch.labels, ignore_index=IGNORE, reduction="none"
    )


def reduce(losses: torch.Tensor, batch: Batch, reduction: str) -> torch.Tensor:
    """The loss the loop backpropagates and logs, from the batch's token losses."""
    total = losses.sum()
    if reduction == "sum-per-sequence":
        return total / len(batch.lengths)  # a sum per sequence: grows with the lengths
    if reduction == "sum-per-budget":
        return total / TOKEN_BUDGET  # a fixed divisor: a long batch counts for more
    return total / batch.tokens  # the per-token mean of this batch


def per_token_mean(model: nn.Module, batch: Batch) -> float:
    """The batch's per-token mean by PyTorch's own ignore-index mean: the reference the
    logged number is set beside."""
    logits = model(batch.inputs)
    return float(F.cross_entropy(logits.flatten(0, 1), batch.labels.flatten(), ignore_index=IGNORE))


@torch.no_grad()
def evaluate(model: nn.Module, batches: list[Batch], evaluation: str) -> tuple[float, list[float]]:
    """The evaluation number as the loop computes it, and each batch's per-token mean."""
    sums = [float(token_losses(model, batch).sum()) for batch in batches]
    means = [total / batch.tokens for total, batch in zip(sums, batches, strict=True)]
    if evaluation == "batch-means":
        return sum(means) / len(means), means
    return sum(sums) / sum(batch.tokens for batch in batches), means


@torch.no_grad()
def corpus_per_token(model: nn.Module, sequences: list[list[int]]) -> float:
    """Every token's loss over every token, one sequence at a time: no batch, no padding."""
    total, count = 0.0, 0
    for sequence in sequences:
        inputs = torch.tensor([[BOS, *sequence[:-1]]])
        total += float(F.cross_entropy(model(inputs)[0], torch.tensor(sequence), reduction="sum"))
        count += len(sequence)
    return total / count


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train with the chosen reduction and evaluation; see VariableLengthLoss."""
    config = LengthConfig(**{k: knobs[k] for k in LengthConfig.__dataclass_fields__ if k in knobs})
    run = Run(seed, report)
    table_ = successor_table(run.data_rng)
    train_seqs = [
        draw_sequence(n, table_, run.data_rng) for n in draw_lengths(config.lengths, run.data_rng)
    ]
    eval_seqs = [
        draw_sequence(n, table_, run.data_rng) for n in draw_lengths(config.lengths, run.data_rng)
    ]
    batches = long_bucket(train_seqs, run.data_rng)  # the long documents, if any, are the last
    order = epoch_order(run)
    if config.bad_batch == "on":
        # An ordinary batch half-way through the epoch (never the long documents' batch).
        broken = next(i for i in order[len(order) // 2 - 1 :] if i != BATCHES - 1)
        batches[broken] = corrupt(batches[broken])
    eval_batches = (
        by_length(eval_seqs)
        if config.eval_batching == "by-length"
        else shuffled(eval_seqs, run.data_rng)
    )
    model = make_model(config.width)  # initial weights from the runner's manual_seed
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    initial_per_token = corpus_per_token(model, eval_seqs)
    logged: list[float] = []
    per_token: list[float] = []
    tokens: list[int] = []
    step = 0
    for _epoch in range(config.epochs):
        for index in order:
            batch = batches[index]
            loss = reduce(token_losses(model, batch), batch, config.reduction)
            with torch.no_grad():
                reference = per_token_mean(model, batch)
            if run.stop_if_nonfinite(step, loss.item(), reference):
                break
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            run.after_backward()
            optimizer.step()
            logged.append(loss.item())
            per_token.append(reference)
            tokens.append(batch.tokens)
            run.log("loss", step, loss.item())
            run.log("per_token", step, reference)
            run.log("tokens", step, batch.tokens)
            step += 1
        eval_number, means = evaluate(model, eval_batches, config.evaluation)
        run.log("eval_loss", step, eval_number)
        # Token-weighted over the batches, which is the per-token corpus mean (the unbatched
        # reference, dearer, is computed once at the end).
        run.log("eval_per_token", step, weighted(means, eval_batches))
        if run.nonfinite_step is not None:
            break
    eval_number, eval_means = evaluate(model, eval_batches, config.evaluation)
    signature = summarise(logged, per_token, tokens, len(order))
    signature.eval_number = eval_number
    signature.eval_per_token = corpus_per_token(model, eval_seqs)
    signature.eval_batch_means = sum(eval_means) / len(eval_means)
    signature.eval_gap = signature.eval_number / signature.eval_per_token - 1.0
    signature.best_per_token = best_per_token([len(s) for s in eval_seqs])
    signature.best_batch_means = best_batch_means([b.lengths for b in eval_batches])
    signature.initial_eval_per_token = initial_per_token
    signature.final_loss = run.tail_mean("loss")
    signature.steps_run = len(logged)
    signature.nonfinite_step = run.nonfinite_step
    inputs = {
        "shapes": {"train_batches": len(batches), "batch": BATCH, "vocab": VOCAB},
        "sha256": sequences_digest(train_seqs + eval_seqs),
        "examples": decoded(batches[order[0]]),
        "long_batch": decoded(batches[-1], 1),
    }
    last = slice(len(logged) - len(order), len(logged))
    rows = [
        [step_, t, value, mean, value / mean if mean else None]
        for step_, t, value, mean in zip(
            range(last.start, last.stop), tokens[last], logged[last], per_token[last], strict=True
        )
    ]
    eval_rows = [[b.tokens, m] for b, m in zip(eval_batches, eval_means, strict=True)]
    tables = [
        table(
            "last-epoch",
            "Last epoch, per batch: tokens, the logged loss and the batch's per-token mean",
            ["step", "tokens", "logged loss", "per-token mean", "logged / per-token"],
            rows,
        ),
        table(
            "eval-batches",
            "Evaluation batches: tokens and per-token mean after training",
            ["tokens", "per-token mean"],
            eval_rows,
        ),
    ]
    return run.outcome(signature, inputs=inputs, tables=tables)


def weighted(means: list[float], batches: list[Batch]) -> float:
    return sum(m * b.tokens for m, b in zip(means, batches, strict=True)) / sum(
        b.tokens for b in batches
    )


def epoch_order(run: Run) -> list[int]:
    """The fixed order of the 16 batches in every epoch: shuffled once, with the last batch
    built (the long documents, when lengths are mixed) never first or last in the epoch."""
    order = torch.randperm(BATCHES - 1, generator=run.order_rng).tolist()
    place = 3 + int(torch.randint(0, BATCHES - 6, (1,), generator=run.order_rng))
    return [*order[:place], BATCHES - 1, *order[place:]]


def summarise(
    logged: list[float], per_token: list[float], tokens: list[int], epoch: int
) -> VariableLengthSignature:
    """The per-batch readings: the logged loss against the per-token mean and the tokens."""
    signature = VariableLengthSignature()
    if not logged:
        return signature
    ratios = [value / mean for value, mean in zip(logged, per_token, strict=True)]
    divisors = [t / r for t, r in zip(tokens, ratios, strict=True)]
    signature.tokens_min, signature.tokens_max = min(tokens), max(tokens)
    signature.ratio_min, signature.ratio_max = min(ratios), max(ratios)
    signature.divisor_min, signature.divisor_max = min(divisors), max(divisors)
    last = slice(max(0, len(logged) - epoch), len(logged))
    xs = [float(t) for t in tokens[last]]
    signature.loss_tokens_correlation = measure.correlation(xs, logged[last])
    signature.per_token_tokens_correlation = measure.correlation(xs, per_token[last])
    spike = measure.highest_point(logged[last], per_token[last], tokens[last])
    if spike is not None:
        signature.spike_ratio = spike.ratio
        signature.spike_step = last.start + spike.index
        signature.spike_tokens = spike.tokens
        signature.spike_is_longest = spike.is_longest
        signature.spike_per_token_ratio = spike.per_token_ratio
    return signature
