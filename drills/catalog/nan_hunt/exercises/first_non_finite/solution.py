"""Hunt the NaN (reference solution): first_non_finite().

The judge builds a model and a batch, then calls first_non_finite(model, inputs, loss_fn). Your
function runs one step's forward pass, loss and backward pass, and says where the first NaN or
inf appears: None when all is finite, ("forward", name) for the first module whose output holds
NaN or inf, ("loss", None) when only the loss does, ("backward", name) for the first module
whose backward sends a non-finite gradient toward its input. Names are model.named_modules()'s.
Change no weight, and leave no hook behind.
"""

from collections.abc import Callable

import torch
from torch import nn

Answer = tuple[str, str | None] | None
LossFn = Callable[[torch.Tensor], torch.Tensor]


def finite(value: object) -> bool:
    """Every floating tensor in value (a tensor, or a tuple of them and None) is finite."""
    tensors = value if isinstance(value, tuple | list) else (value,)
    return all(bool(torch.isfinite(t).all()) for t in tensors if isinstance(t, torch.Tensor))


def first_non_finite(model: nn.Module, inputs: torch.Tensor, loss_fn: LossFn) -> Answer:
    names = {module: name for name, module in model.named_modules()}
    hits: dict[str, list[str]] = {"forward": [], "backward": []}

    def on_forward(module: nn.Module, args: object, output: object) -> None:
        if not finite(output):
            hits["forward"].append(names[module])

    def on_backward(module: nn.Module, grad_input: object, grad_output: object) -> None:
        if not finite(grad_input):  # None (an input that needs no gradient) is skipped
            hits["backward"].append(names[module])

    handles = [m.register_forward_hook(on_forward) for m in names]
    handles += [m.register_full_backward_hook(on_backward) for m in names]
    try:
        loss = loss_fn(model(inputs))
        if hits["forward"]:  # hooks run as each output is made: the first is the earliest
            return "forward", hits["forward"][0]
        if not finite(loss):
            return "loss", None
        torch.autograd.backward(loss)
        if hits["backward"]:
            return "backward", hits["backward"][0]
        return None
    finally:  # also when the model raises: a hook left behind runs on every later step
        for handle in handles:
            handle.remove()


if __name__ == "__main__":
    # A local try on a model of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    broken = nn.Linear(8, 8)
    net = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Sequential(broken, nn.ReLU()))
    with torch.no_grad():
        broken.weight[0, 0] = float("inf")  # a broken weight, two levels down
    targets = torch.randint(8, (16,))

    def loss_fn(output: torch.Tensor) -> torch.Tensor:
        return nn.functional.cross_entropy(output, targets)

    print(first_non_finite(net, torch.randn(16, 4), loss_fn))  # ('forward', '2.0')
