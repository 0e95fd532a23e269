"""The loop runs, nothing learns. Write audit().

The judge builds a model and its optimizer, runs a forward pass and loss.backward(), then calls
audit(model, optimizer, loss). Your function reports on every parameter, and changes nothing:
training would carry on with the model, its gradients and its optimizer as you leave them.

    model      an nn.Module; its gradients are in each parameter's .grad
    optimizer  the torch.optim optimizer training it (it may have several param groups)
    loss       the loss the gradients came from (already backpropagated: don't call
               backward again)
    returns    a dict with one row per name of model.named_parameters():

        {"head.weight": {"requires_grad": True,     # the parameter's own flag
                         "in_optimizer": True,      # does a param group hold this tensor?
                         "grad": "finite",          # "none", "zero", "finite" or "non-finite"
                         "grad_norm": 0.731},       # the L2 norm of .grad, a float
         ...}

    grad is "none" when .grad is None, "non-finite" when it holds any NaN or inf, "zero" when
    every entry is 0, else "finite". grad_norm is a float for "zero" (0.0) and "finite", and
    None for "none" and "non-finite".
"""

import torch
from torch import nn


def audit(
    model: nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor
) -> dict[str, dict[str, object]]:
    raise NotImplementedError("write audit()")


if __name__ == "__main__":
    # A local try on a model of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    net = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    opt = torch.optim.SGD(net[2].parameters(), lr=0.1)  # the first layer left out
    net[0].bias.requires_grad_(False)
    out = nn.functional.cross_entropy(net(torch.randn(16, 4)), torch.randint(2, (16,)))
    torch.autograd.backward(out)
    for name, row in audit(net, opt, out).items():
        print(f"{name:<10} {row}")
