"""Batch size and noise (reference solution): read_spike().

returns  {"batch_loss": float, "set_loss": float, "sigmas": float,
          "worst_batch_loss": float, "corrupt": bool}

sigmas is (batch_loss - set_loss) / (sigma / sqrt(B)), sigma the std of the set's
per-example losses; worst_batch_loss the highest loss a batch of B distinct training
examples could have; corrupt when batch_loss passes it by more than 0.1% of it.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


@torch.no_grad()
def read_spike(
    model: nn.Module,
    set_features: torch.Tensor,
    set_labels: torch.Tensor,
    batch_features: torch.Tensor,
    batch_labels: torch.Tensor,
) -> dict[str, object]:
    size = len(batch_labels)
    losses = F.cross_entropy(model(set_features), set_labels, reduction="none").double()
    batch_loss = float(F.cross_entropy(model(batch_features), batch_labels))
    set_loss = float(losses.mean())
    # A batch's loss scatters around the set's by sigma / sqrt(B): the unit of the height.
    spread = float(losses.std(unbiased=False)) / math.sqrt(size)
    # No batch of B distinct examples can beat the mean of the B largest losses; a height in
    # sigmas cannot say this, since the per-example losses have a long tail.
    worst = float(losses.topk(min(size, len(losses))).values.mean())
    return {
        "batch_loss": batch_loss,
        "set_loss": set_loss,
        "sigmas": (batch_loss - set_loss) / spread,
        "worst_batch_loss": worst,
        "corrupt": batch_loss > worst * 1.001,
    }


if __name__ == "__main__":
    # A local try (the judge ignores this block): a random model, a set and one odd example.
    torch.manual_seed(0)
    net = nn.Linear(8, 4)
    xs, ys = torch.randn(512, 8), torch.randint(4, (512,))
    print("the set's loss:", F.cross_entropy(net(xs), ys).item())
    odd = xs[:1] * 20  # in other units, labelled as the model least expects
    print(read_spike(net, xs, ys, odd, net(odd).argmin(dim=1)))
