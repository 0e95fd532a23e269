"""Optimizer membership (reference solution): relative_update().

The judge builds a model and its optimizer and runs loss.backward(): the gradients are in
.grad. Then it calls relative_update(model, optimizer, name). Your function takes exactly one
optimizer step, as training would, and says how far that step moved the parameter called
`name`, relative to its size before the step:

    ||θ_after - θ_before|| / ||θ_before||        (L2 norms over all of the tensor's entries)

    returns    the ratio as a Python float:
               - 0.0 for a parameter the step does not move (the optimizer does not hold it);
               - None for a parameter whose norm before the step is 0: the ratio is undefined
                 there (no inf, no nan, no small number added to the norm).
"""

import torch
from torch import nn


def relative_update(model: nn.Module, optimizer: torch.optim.Optimizer, name: str) -> float | None:
    parameter = dict(model.named_parameters())[name]
    # A copy: step() changes the parameter in place, and a view would change with it.
    before = parameter.detach().clone()
    optimizer.step()  # what the optimizer does with the gradient, not the gradient itself
    size = float(before.norm())
    if size == 0.0:
        return None  # undefined: any number here would be made up
    return float((parameter.detach() - before).norm()) / size


if __name__ == "__main__":
    # A local try on a model of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    xs, ys = torch.randn(32, 4), torch.randint(2, (32,))
    torch.autograd.backward(nn.functional.cross_entropy(net(xs), ys))
    print("0.weight moved by", relative_update(net, opt, "0.weight"), "of its size")
