"""The training loop of "Group and near-copy leakage": split reviews into training and validation,
audit the split three ways, train an MLP, and score it on validation and on users it never saw.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.group_leakage.audit import (
    difference_noise,
    near_copies_of,
    shared_users,
)
from drills.catalog.group_leakage.problem import (
    CONTENT,
    STYLE,
    Rows,
    concat,
    make_population,
    make_users,
    near_copies,
    rows_digest,
    split_indices,
    write_reviews,
)
from drills.catalog.group_leakage.report import audit_table, describe_inputs, loss_table
from drills.catalog.group_leakage.signature import GroupLeakageSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run
from drills.kit.synthetic_classification import exact_matches

COPY_ACCOUNTS = 1_000_000  # account ids of near copies start here, far above every real user


@dataclass(frozen=True)
class LeakageConfig:
    split: str = "random-rows"  # or "by-user": whole users on one side
    rows_per_user: int = 4
    near_copies: float = 0.0  # share of validation rows replaced by near copies of training rows
    perturbation: float = 1e-3  # std of the move of each feature of a near copy
    user_share: float = 0.4  # share of the target's variance that is the user's own offset
    dedupe: str = "none"  # "exact" or "near": drop the validation rows that audit flags
    noise: float = 0.06  # share of the target's variance no model can predict
    pool: int = 1024  # reviews split into training and validation
    val_rows: int = 256  # a quarter of them
    unseen_rows: int = 1024  # reviews of users who are nowhere in the pool
    hidden: int = 128  # ~19k weights: plenty to memorise 200 users' offsets
    steps: int = 200  # full-batch AdamW steps: the training loss ends near 0
    lr: float = 3e-3
    weight_decay: float = 0.0
    eval_every: int = 10


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Split, audit, train and score; see GroupLeakage."""
    config = LeakageConfig(
        split=knobs["split"],
        rows_per_user=knobs["rows_per_user"],
        near_copies=knobs["near_copies"],
        perturbation=knobs["perturbation"],
        user_share=knobs["user_share"],
        dedupe=knobs["dedupe"],
    )
    run = Run(seed, report)
    k = config.rows_per_user
    # Everything is drawn from the data generator in one order whatever the split, the copies
    # or the deduplication: those knobs change how the same reviews are used, never the reviews.
    population = make_population(config.user_share, config.noise, run.data_rng)
    pool_users = make_users(config.pool // k, 0, run.data_rng)
    pool = write_reviews(population, pool_users, k, run.data_rng)
    fresh = write_reviews(population, pool_users, 1, run.data_rng)  # one more review each
    unseen_users = make_users(config.unseen_rows // k, config.pool // k, run.data_rng)
    unseen = write_reviews(population, unseen_users, k, run.data_rng)
    copy_picks = torch.rand(config.val_rows, generator=run.data_rng)
    copy_moves = torch.randn(config.val_rows, CONTENT + STYLE, generator=run.data_rng)

    val_index, train_index = split_indices(
        pool, config.val_rows, config.split == "by-user", run.order_rng
    )
    train_set = pool.take(train_index)
    copies = round(config.near_copies * config.val_rows)
    # The last validation rows give way to near copies of training rows (the same review posted
    # again under another account): the validation set keeps its size.
    copied = near_copies(
        train_set,
        (copy_picks[:copies] * len(train_set)).long(),
        config.perturbation * copy_moves[:copies],
        COPY_ACCOUNTS,
    )
    val_set = concat(pool.take(val_index[: config.val_rows - copies]), copied)
    dropped = 0
    if config.dedupe != "none":
        audit = exact_matches if config.dedupe == "exact" else near_copies_of
        keep = ~audit(train_set.features, val_set.features)
        dropped = int((~keep).sum())
        val_set = val_set.take(torch.nonzero(keep).flatten())
    known = fresh.take(torch.nonzero(shared_users(train_set.users, fresh.users)).flatten())

    model = fit(config, run, train_set, val_set, unseen)
    signature = measure(config, model, train_set, val_set, unseen, known, dropped)
    return run.outcome(
        signature,
        inputs=describe_inputs(train_set, val_set, unseen, rows_digest(pool, fresh, unseen)),
        tables=[audit_table(signature), loss_table(signature)],
    )


def fit(config: LeakageConfig, run: Run, train_set: Rows, val_set: Rows, unseen: Rows) -> nn.Module:
    """The MLP trained full-batch on `train_set`, each set scored every few steps (and before the
    first): the same training whoever made the split (the drill, or a learner's split() judged
    by the exercise). The weights start from torch's global seed, set by the caller."""
    model = nn.Sequential(
        nn.Linear(CONTENT + STYLE, config.hidden),
        nn.ReLU(),
        nn.Linear(config.hidden, config.hidden),
        nn.ReLU(),
        nn.Linear(config.hidden, 1),
    )
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay
    )
    run.watch(model, optimizer)
    score(run, model, 0, train_set, val_set, unseen)  # before training: every curve starts at 1
    for step in range(1, config.steps + 1):
        # Full batch: no batch order to vary, so the curves move only with what the knobs change.
        loss = F.mse_loss(model(train_set.features).squeeze(1), train_set.targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        optimizer.step()
        if step % config.eval_every == 0:
            score(run, model, step, train_set, val_set, unseen)

    return model


def score(run: Run, model: nn.Module, step: int, train: Rows, val: Rows, unseen: Rows) -> None:
    for name, rows in (("train", train), ("val", val), ("unseen", unseen)):
        run.log(name, step, float(row_losses(model, rows).mean()))


@torch.no_grad()
def row_losses(model: nn.Module, rows: Rows) -> torch.Tensor:
    predictions: torch.Tensor = model(rows.features).squeeze(1)
    return (predictions - rows.targets).pow(2)


def measure(
    config: LeakageConfig,
    model: nn.Module,
    train_set: Rows,
    val_set: Rows,
    unseen: Rows,
    known: Rows,
    dropped: int,
) -> GroupLeakageSignature:
    """The audits of the final split and the losses of the trained model, row by row."""
    exact = exact_matches(train_set.features, val_set.features)
    by_user = shared_users(train_set.users, val_set.users)
    by_distance = near_copies_of(train_set.features, val_set.features)
    flagged = by_user | by_distance
    val_losses, unseen_losses = row_losses(model, val_set), row_losses(model, unseen)
    train_loss = float(row_losses(model, train_set).mean())
    val_loss, unseen_loss = float(val_losses.mean()), float(unseen_losses.mean())
    known_loss = float(row_losses(model, known).mean()) if len(known) else None
    n = len(val_set)
    user_share, copy_share = float(by_user.sum()) / n, float(by_distance.sum()) / n
    from_copies = copy_share * (unseen_loss - train_loss)
    from_users = user_share * (unseen_loss - known_loss) if known_loss is not None else 0.0
    return GroupLeakageSignature(
        rows_per_user=config.rows_per_user,
        train_rows=len(train_set),
        val_rows=n,
        unseen_rows=len(unseen),
        removed_by_dedupe=dropped,
        exact_matches=int(exact.sum()),
        shared_user_rows=int(by_user.sum()),
        near_copies_found=int(by_distance.sum()),
        shared_share=float(flagged.sum()) / n,
        user_share_found=user_share,
        copy_share_found=copy_share,
        final_train_loss=train_loss,
        final_val_loss=val_loss,
        unseen_loss=unseen_loss,
        known_user_loss=known_loss,
        flagged_val_loss=float(val_losses[flagged].mean()) if flagged.any() else None,
        unflagged_val_loss=float(val_losses[~flagged].mean()) if (~flagged).any() else None,
        val_optimism=unseen_loss - val_loss,
        optimism_noise=difference_noise(val_losses, val_set.users, unseen_losses, unseen.users),
        expected_optimism=from_users + from_copies,
        expected_from_users=from_users,
        expected_from_copies=from_copies,
        unseen_floor=config.user_share + config.noise,
        known_floor=config.noise,
    )
