"""Check the initialisation. Fix init_weights() so that any network it sets up starts sound.

The judge builds its own networks (other widths, depths and numbers of classes, on hidden
seeds) and calls init_weights(model) once on each. A network is an nn.Sequential of nn.Linear
and nn.ReLU layers whose last nn.Linear gives the logits, and it arrives with every parameter
unset (as after to_empty(); the judge's hold NaN). Before any update the judge reads the loss
against ln(C), every layer's activations and gradient and the ReLUs that never fire; then it
trains a copy. Set every weight and bias in place; the return value is ignored.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


def init_weights(model: nn.Sequential) -> None:
    for layer in model:
        if isinstance(layer, nn.Linear):
            # Unit variance, like the inputs.
            nn.init.normal_(layer.weight, mean=0.0, std=1.0)
            nn.init.zeros_(layer.bias)


def make_model(features: int, hidden: list[int], classes: int) -> nn.Sequential:
    """The kind of network the judge builds: Linear, ReLU, ..., Linear (the logits)."""
    layers: list[nn.Module] = []
    for width_in, width_out in zip([features, *hidden[:-1]], hidden, strict=True):
        layers += [nn.Linear(width_in, width_out), nn.ReLU()]
    layers.append(nn.Linear(hidden[-1], classes))
    return nn.Sequential(*layers)


if __name__ == "__main__":
    # A local check on data of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    xs = torch.randn(256, 16)
    ys = (xs @ torch.randn(16, 10)).argmax(dim=1)
    with torch.device("meta"):
        net = make_model(16, [64, 64, 64], 10)
    net.to_empty(device="cpu")  # no parameter holds a value yet
    init_weights(net)
    with torch.no_grad():
        h, hidden = xs, 0
        for layer in net:
            h = layer(h)
            if isinstance(layer, nn.ReLU):
                hidden += 1
                print(f"hidden layer {hidden}: activation RMS {h.pow(2).mean().sqrt().item():.3g}")
        loss = F.cross_entropy(h, ys).item()
    print(f"loss before any update {loss:.4g}; ln(10) = {math.log(10):.4g}")

# mypy: disable-error-code="no-untyped-call"
