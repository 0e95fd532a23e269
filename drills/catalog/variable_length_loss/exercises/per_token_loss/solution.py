"""Variable-length losses (reference solution): a loss that means the same on every batch.

The judge calls train(model, batches, report) with its own bigram model and padded batches (on
hidden seeds). It compares one step of your loop, from the same weights on the same batch, with
the step plain SGD at LR takes on the batch's mean loss per real token, and measures the
per-token loss of the weights your loop leaves behind on sequences it never trained on. Train
`model` in place; the return value is ignored.

    model    maps (B, L) int64 token ids to (B, L, 16) logits over the next token
    batches  a list of (inputs (B, L), labels (B, L)) int64 pairs; padded label positions
             hold -100, and the sequences of a batch differ in length
    report   report(name, step, value) draws a point on your live curve
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

LR = 2.0  # plain SGD: the rate that trains this model well on a per-token mean
IGNORE = -100  # the label of a padded position


def train(
    model: nn.Module,
    batches: list[tuple[torch.Tensor, torch.Tensor]],
    report: Callable[[str, int, float], None],
) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for step, (inputs, labels) in enumerate(batches):
        logits = model(inputs)
        losses = F.cross_entropy(
            logits.transpose(1, 2), labels, ignore_index=IGNORE, reduction="none"
        )
        # Padded positions hold a loss of 0 and must not count: divide the sum by the batch's
        # real tokens, so a batch of long documents weighs each token as an ordinary one does.
        loss = losses.sum() / (labels != IGNORE).sum()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report("loss", step, loss.item())


if __name__ == "__main__":
    # A local run on sequences of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    net = nn.Sequential(nn.Embedding(18, 32), nn.Linear(32, 16))
    made = []
    for length in (8, 8, 9, 7, 50, 48, 8, 7):
        tokens = torch.randint(0, 16, (length,))
        inputs = torch.cat([torch.tensor([17]), tokens[:-1]])
        made.append((inputs, tokens))
    width = max(len(t) for _, t in made)
    inputs = torch.full((len(made), width), 16)
    labels = torch.full((len(made), width), IGNORE)
    for row, (i, t) in enumerate(made):
        inputs[row, : len(i)], labels[row, : len(t)] = i, t
    train(net, [(inputs, labels)] * 20, lambda name, step, value: print(step, round(value, 3)))

# mypy: disable-error-code="no-untyped-call"
