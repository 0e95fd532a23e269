"""Find the first non-finite tensor of a training step, in the order the step creates them.

A NaN loss is the end of a story, not its beginning: by the time the loss is NaN, every tensor
downstream of the first bad value is NaN too. The finder checks the stages of a step in the order
they happen and names the first non-finite tensor it meets:

1. data        the input tensors of the batch, before the model sees them;
2. activation  the output of every module, in the order the forward pass finishes them
               (a child finishes before its parent, so the innermost culprit comes first);
3. loss        the loss value;
4. gradient    every parameter's gradient, in the order backward produced them (the parameters
               closest to the loss first);
5. parameter   every parameter after the optimizer step.

A value made by plain tensor code between modules (inside a parent's forward) shows up as the
output of the next module that finishes with it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import nn

Stage = Literal["data", "activation", "loss", "gradient", "parameter"]
STAGES: tuple[Stage, ...] = ("data", "activation", "loss", "gradient", "parameter")
Kind = Literal["nan", "inf"]

ROOT_NAME = "model"  # what the finder calls the top-level module, whose own name is ""


@dataclass(frozen=True)
class Finding:
    """The first non-finite tensor: where (stage + name), when (step) and what (kind, how many)."""

    stage: Stage
    name: str
    step: int
    kind: Kind  # "nan" if any element is NaN, otherwise "inf" (either sign)
    count: int  # how many elements are non-finite
    numel: int  # how many elements the tensor has

    def describe(self) -> str:
        return (
            f"{self.stage} '{self.name}' at step {self.step}: {self.count} of {self.numel} "
            f"elements are {self.kind}"
        )


def inspect_tensor(stage: Stage, name: str, step: int, tensor: torch.Tensor) -> Finding | None:
    """A Finding if `tensor` holds a NaN or an infinity, else None. Integer tensors are finite."""
    if not (tensor.is_floating_point() or tensor.is_complex()):
        return None
    values = tensor.detach()
    finite = torch.isfinite(values)
    if bool(finite.all()):
        return None
    kind: Kind = "nan" if bool(torch.isnan(values).any()) else "inf"
    count = int((~finite).sum())
    return Finding(stage, name, step, kind, count, values.numel())


def first_in(
    stage: Stage, step: int, named: Iterable[tuple[str, torch.Tensor | None]]
) -> Finding | None:
    """The first non-finite tensor of `named`, in its order; None entries are skipped."""
    for name, tensor in named:
        if tensor is not None:
            finding = inspect_tensor(stage, name, step, tensor)
            if finding is not None:
                return finding
    return None


class FirstNonFinite:
    """Watches one model: call `begin_step`, then the `check_*` methods in stage order.

    Each check returns the first non-finite tensor of its stage (or None). The activation and
    gradient checks read what hooks recorded while the forward and backward passes ran; call
    `close()` (or use the finder as a context manager) to remove the hooks.
    """

    def __init__(self, model: nn.Module) -> None:
        self._parameters = dict(model.named_parameters())
        self._step = 0
        self._activation: Finding | None = None
        self._gradient_order: list[str] = []  # names, in the order backward produced them
        self._handles: list[Any] = []
        for name, module in model.named_modules():
            hook = self._activation_hook(name or ROOT_NAME)
            self._handles.append(module.register_forward_hook(hook))
        for name, parameter in self._parameters.items():
            if parameter.requires_grad:
                register = parameter.register_post_accumulate_grad_hook
                self._handles.append(register(self._gradient_hook(name)))  # type: ignore[no-untyped-call]

    @property
    def gradient_order(self) -> tuple[str, ...]:
        """Parameter names in the order this step's backward produced their gradients."""
        return tuple(dict.fromkeys(self._gradient_order))

    def begin_step(self, step: int) -> None:
        self._step = step
        self._activation = None
        self._gradient_order = []

    def check_data(self, tensors: Mapping[str, torch.Tensor]) -> Finding | None:
        return first_in("data", self._step, tensors.items())

    def check_activations(self) -> Finding | None:
        return self._activation

    def check_loss(self, loss: torch.Tensor, name: str = "loss") -> Finding | None:
        return inspect_tensor("loss", name, self._step, loss)

    def check_gradients(self) -> Finding | None:
        produced = self.gradient_order
        # Gradients set without autograd (none in a normal step) come after, closest-to-loss
        # first, which for a model built top to bottom is the reverse of registration order.
        rest = [name for name in reversed(self._parameters) if name not in produced]
        order = [*produced, *rest]
        return first_in("gradient", self._step, ((n, self._parameters[n].grad) for n in order))

    def check_parameters(self) -> Finding | None:
        return first_in("parameter", self._step, self._parameters.items())

    def close(self) -> None:
        for handle in self._handles:
            handle.remove()
        self._handles = []

    def __enter__(self) -> FirstNonFinite:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _activation_hook(self, name: str) -> Callable[[nn.Module, Any, Any], None]:
        def hook(module: nn.Module, inputs: Any, output: Any) -> None:
            if self._activation is None:  # keep the first; later ones are its consequences
                self._activation = first_in("activation", self._step, named_outputs(name, output))

        return hook

    def _gradient_hook(self, name: str) -> Callable[[torch.Tensor], None]:
        def hook(parameter: torch.Tensor) -> None:
            self._gradient_order.append(name)

        return hook


def named_outputs(name: str, output: Any) -> list[tuple[str, torch.Tensor | None]]:
    """A module's output as (name, tensor) pairs: one tensor, or a tuple/list of them."""
    if isinstance(output, torch.Tensor):
        return [(name, output)]
    if isinstance(output, tuple | list):
        return [
            (f"{name}[{index}]", item)
            for index, item in enumerate(output)
            if isinstance(item, torch.Tensor)
        ]
    return []
