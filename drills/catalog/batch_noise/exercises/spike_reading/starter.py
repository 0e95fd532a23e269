"""Batch size and noise. Write read_spike().

One step's batch loss jumped far above the curve. Set that batch beside the training set it was
drawn from, at the weights the step met: could a batch of the set have done it?

    model           a classifier: model(features) gives logits (rows, classes)
    set_features    (n, d) float32: every example of the training set
    set_labels      (n,) int64
    batch_features  (B, d) float32: the batch of the step whose loss jumped
    batch_labels    (B,) int64
    returns         a dict:

        {"batch_loss": 2.1,        # the batch's mean cross-entropy
         "set_loss": 0.5,          # the training set's mean cross-entropy
         "sigmas": 4.0,            # (batch_loss - set_loss) / (sigma / sqrt(B)), sigma the
                                   # std of the set's per-example losses (n or n - 1: either)
         "worst_batch_loss": 2.6,  # the highest loss any batch of B distinct training
                                   # examples could have at these weights
         "corrupt": False}         # True when batch_loss is above worst_batch_loss by more
                                   # than 0.1% of it: no batch of the set could reach it

    Training batches are cut from shuffled epochs, so a batch holds B distinct examples. The
    judge's runs use models, sets and batch sizes you don't see; the numbers above are made up.
"""

import torch
import torch.nn.functional as F
from torch import nn


def read_spike(
    model: nn.Module,
    set_features: torch.Tensor,
    set_labels: torch.Tensor,
    batch_features: torch.Tensor,
    batch_labels: torch.Tensor,
) -> dict[str, object]:
    raise NotImplementedError("write read_spike()")


if __name__ == "__main__":
    # A local try (the judge ignores this block): a random model, a set and one odd example.
    torch.manual_seed(0)
    net = nn.Linear(8, 4)
    xs, ys = torch.randn(512, 8), torch.randint(4, (512,))
    print("the set's loss:", F.cross_entropy(net(xs), ys).item())
    odd = xs[:1] * 20  # in other units, labelled as the model least expects
    print(read_spike(net, xs, ys, odd, net(odd).argmin(dim=1)))
