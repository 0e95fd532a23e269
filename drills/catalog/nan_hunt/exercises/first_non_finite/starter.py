"""Hunt the NaN. Write first_non_finite().

The judge builds a model and a batch, then calls first_non_finite(model, inputs, loss_fn). Your
function runs one step's forward pass, loss and backward pass, and says where the first NaN or
inf appears. Training would carry on with the model as you leave it: change no weight, and
leave no hook behind.

    model      an nn.Module; its parts may be nested (a Sequential inside a module)
    inputs     a batch: model(inputs) is the model's output
    loss_fn    loss_fn(output) is the loss, a scalar tensor
    returns    None when the output of every module, the loss and the backward's gradients
               are all finite; otherwise where the first non-finite value appears:

        ("forward", "encoder.layers.1")   # the first module whose output holds NaN or inf,
                                          # in the order the outputs are made
        ("loss", None)                    # every output finite, the loss is not
        ("backward", "encoder.layers.3")  # forward and loss finite: the first module whose
                                          # backward sends a non-finite gradient toward its
                                          # input, in the order the backward pass runs

    Name a module as model.named_modules() names it ('' is the model itself).
"""

from collections.abc import Callable

import torch
from torch import nn

Answer = tuple[str, str | None] | None
LossFn = Callable[[torch.Tensor], torch.Tensor]


def first_non_finite(model: nn.Module, inputs: torch.Tensor, loss_fn: LossFn) -> Answer:
    raise NotImplementedError("write first_non_finite()")


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
