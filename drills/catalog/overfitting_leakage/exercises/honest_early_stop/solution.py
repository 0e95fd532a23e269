"""Triage scores (reference solution): the model you keep does as well as it can on new tickets.

The judge calls train(model, train_x, train_y, val_x, val_y, report) on its own data (hidden
seeds, training tables of other sizes), follows which examples every backward pass trains on,
and scores the weights the model holds when train() returns on tickets nobody has seen.

    model          an MLP: (n, 16) float32 features -> (n, 4) logits; train it in place, and
                   leave it holding the weights you keep
    train_x        (rows, 16) float32: the training table, as exported
    train_y        (rows,) int64: each row's team, 0-3 (noisy: even a perfect model is often
                   wrong)
    val_x, val_y   the team's validation set (512 tickets): every model is compared on it, so
                   keep it whole
    report         report(name, step, value) draws a point on your live curve

Feed the model rows of the tables as they are (no rescaling or augmentation): the judge tells
the examples apart by their features.
"""

import copy
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

EPOCHS = 40  # a budget: the loop stops earlier once validation has turned up
LR = 1.5e-3
BATCH = 32
PATIENCE = 5  # epochs without a new validation minimum before stopping


def train(
    model: nn.Module,
    train_x: torch.Tensor,
    train_y: torch.Tensor,
    val_x: torch.Tensor,
    val_y: torch.Tensor,
    report: Callable[[str, int, float], None],
) -> None:
    # The export holds rows that are also validation tickets, feature for feature: trained on,
    # they make validation look like data the model has seen. Validation stays whole.
    in_val = {tuple(row) for row in val_x.tolist()}
    keep = torch.tensor([tuple(row) not in in_val for row in train_x.tolist()])
    print(f"left out {int((~keep).sum())} of {len(keep)} training rows found in validation")
    train_x, train_y = train_x[keep], train_y[keep]

    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=0.0)
    order = torch.Generator().manual_seed(0)
    best_loss, best_epoch, best_state = float("inf"), 0, copy.deepcopy(model.state_dict())
    for epoch in range(1, EPOCHS + 1):
        model.train()
        for rows in torch.randperm(len(train_y), generator=order).split(BATCH):
            loss = F.cross_entropy(model(train_x[rows]), train_y[rows])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        model.eval()
        with torch.no_grad():
            train_loss = F.cross_entropy(model(train_x), train_y).item()
            val_loss = F.cross_entropy(model(val_x), val_y).item()
        report("train", epoch, train_loss)
        report("val", epoch, val_loss)
        # Keep the weights of the validation minimum; once it is PATIENCE epochs behind, the
        # model is memorising its training rows and further epochs only make it worse.
        if val_loss < best_loss:
            best_loss, best_epoch = val_loss, epoch
            best_state = copy.deepcopy(model.state_dict())
        elif epoch - best_epoch >= PATIENCE:
            break
    model.load_state_dict(best_state)
    print(f"kept epoch {best_epoch}: validation loss {best_loss:.3f}")


# mypy: disable-error-code="no-untyped-call"
