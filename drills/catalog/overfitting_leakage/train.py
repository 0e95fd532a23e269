"""The training loop of "Overfitting and leakage": a large MLP on a small training set.

Kept apart from the drill's description (__init__.py) so that only a worker
process that actually trains imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.overfitting_leakage.signature import OverfittingSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run
from drills.kit.synthetic_classification import (
    LabelledSet,
    TeacherTask,
    build_mlp,
    concat_sets,
    count_distinct,
    decoded_examples,
    draw_set,
    exact_matches,
    first_examples,
    make_teacher,
    mean_loss,
    noise_floor,
    repeat_rows,
    sets_digest,
)
from drills.kit.tables import table


@dataclass(frozen=True)
class OverfittingConfig:
    train_size: int = 128  # fresh training examples
    weight_decay: float = 0.0  # AdamW's decoupled weight decay
    dropout: float = 0.0
    leak: float = 0.0  # fraction of the validation set copied into the training set
    # Different examples among the fresh rows (0: as many as rows); fewer repeat each one, as a
    # join that multiplies rows leaves a file.
    distinct: int = 0
    # Noisy labels (the teacher is far from sure) give a large model plenty to memorise.
    task: TeacherTask = field(default_factory=lambda: TeacherTask(features=16, sharpness=3.0))
    val_examples: int = 512
    clean_examples: int = 1024  # a held-out set nothing is ever copied from
    hidden: int = 128  # ~19k weights: far more than a few hundred noisy labels need
    batch_size: int = 32
    steps: int = 400  # a fixed budget, so every training-set size gets the same compute
    lr: float = 1.5e-3
    eval_every: int = 10


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train the large MLP on the small set, scoring every few steps; see OverfittingLeakage."""
    config = OverfittingConfig(
        train_size=knobs["train_size"],
        weight_decay=knobs["weight_decay"],
        dropout=knobs["dropout"],
        leak=knobs["leak"],
        distinct=knobs["distinct"],
    )
    run = Run(seed, report)
    # The evaluation sets are drawn first from the run's data generator: validation and clean
    # sets depend on the seed only, so runs with different knobs are scored on the same examples.
    teacher = make_teacher(config.task, run.data_rng)
    val_set = draw_set(config.task, teacher, config.val_examples, run.data_rng)
    clean_set = draw_set(config.task, teacher, config.clean_examples, run.data_rng)
    # Drawn before being repeated: 128 examples in 2,048 rows are the very 128 a run with 128
    # rows trains on, so the two runs see the same examples as often, only in another order.
    examples = min(config.distinct or config.train_size, config.train_size)
    fresh_set = repeat_rows(
        draw_set(config.task, teacher, examples, run.data_rng), config.train_size
    )
    # The leak: duplicates of validation examples end up on the training side of the split.
    leaked = round(config.leak * config.val_examples)
    train_set = concat_sets(fresh_set, first_examples(val_set, leaked))

    model = build_mlp(config.task, config.hidden, dropout=config.dropout)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay
    )
    run.watch(model, optimizer)

    order = torch.randperm(len(train_set), generator=run.order_rng)
    position = 0
    model.train()  # scoring below switches to eval mode and back
    for step in range(1, config.steps + 1):
        if position + config.batch_size > len(train_set):  # epoch over: reshuffle
            order, position = torch.randperm(len(train_set), generator=run.order_rng), 0
        indices = order[position : position + config.batch_size]
        position += config.batch_size

        loss = F.cross_entropy(model(train_set.features[indices]), train_set.labels[indices])
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        scoring = step % config.eval_every == 0
        if scoring:
            run.after_backward()  # the audit keeps the latest gradients; the last step scores
        optimizer.step()

        if scoring:
            # Every loss in eval mode: dropout must not make training look worse than it is.
            train_loss = mean_loss(model, train_set, train_mode=False)
            val_loss = mean_loss(model, val_set, train_mode=False)
            clean_loss = mean_loss(model, clean_set, train_mode=False)
            run.log("train", step, train_loss)
            run.log("val", step, val_loss)
            run.log("clean", step, clean_loss)
            run.log("val_minus_train", step, val_loss - train_loss)
            run.log("clean_minus_train", step, clean_loss - train_loss)

    scored_steps = range(config.eval_every, config.steps + 1, config.eval_every)
    val_losses, clean_losses = run.values("val"), run.values("clean")
    best = min(range(len(val_losses)), key=val_losses.__getitem__)
    best_clean = min(range(len(clean_losses)), key=clean_losses.__getitem__)
    final_train, final_val, final_clean = (settled(run, name) for name in ("train", "val", "clean"))
    duplicates = int(exact_matches(train_set.features, val_set.features).sum())
    signature = OverfittingSignature(
        train_examples=len(train_set),
        distinct_examples=count_distinct(train_set.features),
        leaked_examples=leaked,
        duplicates_found=duplicates,
        val_examples=config.val_examples,
        clean_examples=config.clean_examples,
        steps=config.steps,
        final_train_loss=final_train,
        best_step=scored_steps[best],
        min_val_loss=val_losses[best],
        final_val_loss=final_val,
        val_rise=final_val - val_losses[best],
        final_gap=final_val - final_train,
        clean_loss_at_best_step=clean_losses[best],
        best_clean_step=scored_steps[best_clean],
        min_clean_loss=clean_losses[best_clean],
        final_clean_loss=final_clean,
        clean_gap=final_clean - final_train,
        val_optimism=final_clean - final_val,
        optimism_noise=difference_noise(model, val_set, clean_set),
        noise_floor=noise_floor(clean_set),
        chance_loss=math.log(config.task.classes),
        expected_optimism=duplicates / config.val_examples * (final_clean - final_train),
    )
    clean_duplicates = int(exact_matches(train_set.features, clean_set.features).sum())
    return run.outcome(
        signature,
        inputs=describe_inputs(train_set, val_set, clean_set, leaked),
        tables=[
            checkpoint_table(signature),
            split_audit_table(config, signature, clean_duplicates),
        ],
    )


def settled(run: Run, name: str) -> float:
    """Where a scored series settled (mean of its last 10%); every run scores at least once."""
    mean = run.tail_mean(name)
    assert mean is not None
    return mean


def difference_noise(model: nn.Module, first: LabelledSet, second: LabelledSet) -> float:
    """Standard error of the difference between two sets' mean losses, were both honest samples:
    the per-example losses of an overfit model are heavy-tailed, so it is larger than it looks."""
    model.eval()
    with torch.no_grad():
        variances = [
            F.cross_entropy(model(data.features), data.labels, reduction="none").var() / len(data)
            for data in (first, second)
        ]
    model.train()
    return math.sqrt(float(sum(variances)))


def checkpoint_table(signature: OverfittingSignature) -> dict[str, Any]:
    return table(
        "checkpoints",
        "Which checkpoint to keep",
        ("checkpoint", "step", "val loss", "clean held-out loss"),
        (
            (
                "lowest validation loss (what you would keep)",
                signature.best_step,
                signature.min_val_loss,
                signature.clean_loss_at_best_step,
            ),
            (
                "the end of training",
                signature.steps,
                signature.final_val_loss,
                signature.final_clean_loss,
            ),
            (
                "lowest clean loss (hindsight)",
                signature.best_clean_step,
                None,
                signature.min_clean_loss,
            ),
        ),
        note="End-of-training losses are the mean of the last 10% of evaluations.",
    )


def split_audit_table(
    config: OverfittingConfig, signature: OverfittingSignature, clean_duplicates: int
) -> dict[str, Any]:
    leaked, duplicates = signature.leaked_examples, signature.duplicates_found
    return table(
        "split_audit",
        "The split, audited",
        ("set", "examples", "also found in training", "different examples"),
        (
            ("training", signature.train_examples, None, signature.distinct_examples),
            ("validation", config.val_examples, duplicates, None),
            ("clean held-out", config.clean_examples, clean_duplicates, None),
        ),
        note=f"{leaked} validation examples were copied into training; an exact-match "
        f"search finds {duplicates}.",
    )


def describe_inputs(
    train_set: LabelledSet, val_set: LabelledSet, clean_set: LabelledSet, leaked: int
) -> dict[str, Any]:
    return {
        "shapes": {
            "train_features": list(train_set.features.shape),
            "val_features": list(val_set.features.shape),
            "clean_features": list(clean_set.features.shape),
        },
        "sha256": sets_digest(train_set, val_set, clean_set),
        "examples": decoded_examples(train_set),
        "note": f"the training set ends with {leaked} copies of validation examples"
        if leaked
        else "no validation example is copied into training",
    }
