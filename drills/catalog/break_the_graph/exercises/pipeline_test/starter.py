"""Break the graph. Write test_every_layer_learns().

A pytest-style test for the training pipeline: after one backward pass on one batch, every
parameter of the model must be able to learn. The judge calls it as

    test_every_layer_learns(make_model, batch, loss_fn)

    make_model  a function with no arguments that returns a fresh nn.Module, built the same
                way (the same weights) each time you call it
    batch       a tuple (inputs, targets): the model takes `inputs` whole, model(inputs)
    loss_fn     loss_fn(model(inputs), targets) is the scalar loss training minimises

On a model where some parameter would not learn, the test must fail an assert (assert ...,
or pytest.fail); on a healthy model it must return normally. Any other exception is an error,
not a verdict on the model. Say in the assert's message which parameters are at fault.
"""

from collections.abc import Callable

import torch
from torch import nn


def test_every_layer_learns(
    make_model: Callable[[], nn.Module],
    batch: tuple[torch.Tensor, torch.Tensor],
    loss_fn: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
) -> None:
    raise NotImplementedError("write test_every_layer_learns()")


if __name__ == "__main__":
    # A local try on models of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    data = (torch.randn(16, 4), torch.randint(3, (16,)))

    def healthy() -> nn.Module:
        torch.manual_seed(1)
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))

    def frozen() -> nn.Module:
        model = healthy()
        next(model.children()).requires_grad_(False)  # the first layer frozen
        return model

    test_every_layer_learns(healthy, data, nn.functional.cross_entropy)
    print("healthy: passed")
    try:
        test_every_layer_learns(frozen, data, nn.functional.cross_entropy)
        print("frozen: passed, but it should have failed")
    except AssertionError as exc:
        print(f"frozen: failed as it should: {exc}")
