"""Validation below training. Write train_loss_in_eval_mode().

Re-measure the training set exactly the way validation is measured, so that the two numbers can
be compared. The judge calls train_loss_in_eval_mode(model, features, labels) halfway through
training, on its own model (an MLP with dropout) and data (on hidden seeds); training carries on
right after it returns, with the model as your function leaves it.

    model     an nn.Module with dropout layers, in train mode (in one hidden run in eval
              mode, as a validation routine hands it over)
    features  (N, 8) float32: the whole training set
    labels    (N,) int64: its classes, 0..3
    returns   the mean cross-entropy over the set, as a plain Python float
"""

import torch
import torch.nn.functional as F
from torch import nn


def train_loss_in_eval_mode(
    model: nn.Module, features: torch.Tensor, labels: torch.Tensor
) -> float:
    with torch.no_grad():
        logits = model(features)
        return float(F.cross_entropy(logits, labels))


if __name__ == "__main__":
    # A local run on a model of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(8, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 4))
    xs = torch.randn(1024, 8)
    ys = (xs @ torch.randn(8, 4)).argmax(dim=1)
    net.train()
    print("first call: ", train_loss_in_eval_mode(net, xs, ys))
    print("second call:", train_loss_in_eval_mode(net, xs, ys))
    print("still in train mode:", net.training)
