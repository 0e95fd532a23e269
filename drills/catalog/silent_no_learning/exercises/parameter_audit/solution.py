"""The loop runs, nothing learns (reference solution): audit().

The judge builds a model and its optimizer, runs a forward pass and loss.backward(), then calls
audit(model, optimizer, loss). Your function reports on every parameter, and changes nothing:
training would carry on with the model, its gradients and its optimizer as you leave them.

    returns    a dict with one row per name of model.named_parameters():

        {"head.weight": {"requires_grad": True, "in_optimizer": True,
                         "grad": "finite", "grad_norm": 0.731}, ...}

    grad is "none" when .grad is None, "non-finite" when it holds any NaN or inf, "zero" when
    every entry is 0, else "finite". grad_norm is a float for "zero" (0.0) and "finite", and
    None for "none" and "non-finite".
"""

import torch
from torch import nn


def grad_state(grad: torch.Tensor | None) -> tuple[str, float | None]:
    if grad is None:
        return "none", None
    if not bool(torch.isfinite(grad).all()):
        return "non-finite", None  # a NaN or inf anywhere: its norm would say nothing
    norm = float(grad.detach().norm())
    return ("zero" if norm == 0.0 else "finite"), norm


def audit(
    model: nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor
) -> dict[str, dict[str, object]]:
    # The optimizer holds tensors, in any number of groups: compare by identity, not by name.
    held = {id(p) for group in optimizer.param_groups for p in group["params"]}
    rows: dict[str, dict[str, object]] = {}
    for name, parameter in model.named_parameters():
        state, norm = grad_state(parameter.grad)
        rows[name] = {
            "requires_grad": parameter.requires_grad,
            "in_optimizer": id(parameter) in held,
            "grad": state,
            "grad_norm": norm,
        }
    return rows


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
