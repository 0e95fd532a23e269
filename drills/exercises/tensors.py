"""Tensors across the sandbox's wall, as safetensors: never pickle, which would run code.

`safetensors.torch.save` needs NumPy, which is not installed here; `save_tensors` hands the same
tensors to safetensors' own serializer (the format and the bytes are the same). Loading needs
no NumPy. `check_against` is what the judge does with a weights blob before measuring anything.
"""

from __future__ import annotations

from collections.abc import Mapping

import safetensors
import safetensors.torch
import torch

from drills.exercises.transport import MAX_BLOB

MAX_TENSORS = 256


def save_tensors(tensors: Mapping[str, torch.Tensor]) -> bytes:
    """Serialize named CPU tensors to safetensors bytes."""
    kept = {name: t.detach().to("cpu").contiguous().clone() for name, t in tensors.items()}
    specs = {
        name: safetensors.TensorSpec(
            dtype=str(t.dtype).removeprefix("torch."),
            shape=list(t.shape),
            data_ptr=t.data_ptr(),
            data_len=t.numel() * t.element_size(),
        )
        for name, t in kept.items()
    }
    data = bytes(safetensors.serialize(specs))
    del kept  # alive until the bytes are made
    return data


class UnreadableTensors(ValueError):
    pass


def load_tensors(data: bytes | None) -> dict[str, torch.Tensor]:
    """Parse a safetensors blob; UnreadableTensors (with a reason) if it is not one."""
    if data is None:
        raise UnreadableTensors("nothing came back")
    if len(data) > MAX_BLOB:
        raise UnreadableTensors(f"{len(data)} bytes is more than a blob may hold")
    try:
        tensors = safetensors.torch.load(data)
    except Exception as exc:  # a hostile blob: any parse failure is the same answer
        raise UnreadableTensors(f"not a safetensors file ({type(exc).__name__})") from None
    if len(tensors) > MAX_TENSORS:
        raise UnreadableTensors(f"{len(tensors)} tensors, more than any exercise sends")
    return tensors


def check_against(
    tensors: Mapping[str, torch.Tensor], reference: Mapping[str, torch.Tensor]
) -> str | None:
    """What is wrong with `tensors` as a copy of `reference`'s layout: the same names, shapes
    and dtypes, and only finite numbers. None when nothing is."""
    missing = sorted(set(reference) - set(tensors))
    extra = sorted(set(tensors) - set(reference))
    if missing:
        return f"missing {_names(missing)}"
    if extra:
        return f"unexpected {_names(extra)} (the model's parameters are {_names(list(reference))})"
    for name, expected in reference.items():
        got = tensors[name]
        if tuple(got.shape) != tuple(expected.shape):
            return f"{name} has shape {list(got.shape)}, the model's is {list(expected.shape)}"
        if got.dtype != expected.dtype:
            return f"{name} is {got.dtype}, the model's is {expected.dtype}"
        if got.is_floating_point() and not bool(torch.isfinite(got).all()):
            return f"{name} holds NaN or infinite values"
    return None


def _names(names: list[str], shown: int = 4) -> str:
    listed = ", ".join(names[:shown])
    return listed + (f" and {len(names) - shown} more" if len(names) > shown else "")
