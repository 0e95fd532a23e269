"""How the val-below-train cases read an experiment's run: each reading boils what the
experiment shows down to a short key, and two causes whose keys differ are told apart by it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Validation counts as level with the re-scored training loss within this share of it (the
# drill's own band), and as wobbling when its spread is this many times the steady curve's.
LEVEL_BAND = 0.15
WOBBLE_RATIO = 3.0
WOBBLE_FLOOR = 0.002
# The full training set has 8,192 examples; the subset 512.
FEW_EXAMPLES = 1000


def validation_against_rescored(signature: Mapping[str, Any], error: str | None) -> str:
    """Where validation sits once the training set is scored the same way (eval mode)."""
    train_eval, val = signature.get("train_eval_loss"), signature.get("val_loss")
    if train_eval is None or val is None:
        return "no-numbers"
    band = LEVEL_BAND * train_eval
    if val - train_eval > band:
        return "validation-above"
    if train_eval - val > band:
        return "validation-below"
    return "level"


def validation_wobble(signature: Mapping[str, Any], error: str | None) -> str:
    """Does validation jump about from epoch to epoch while the weights have nearly stopped?"""
    val_spread = signature.get("val_spread") or 0.0
    steady = signature.get("train_eval_spread") or 0.0
    if val_spread > max(WOBBLE_RATIO * steady, WOBBLE_FLOOR):
        return "jumps"
    return "steady"


def validation_file_and_loader(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the validation loader yields every row of the validation file."""
    stored, loaded = signature.get("val_file_rows"), signature.get("val_examples")
    if stored is None or loaded is None:
        return "nothing-counted"
    return "loader-drops-rows" if loaded < stored else "loader-yields-every-row"


def training_set_size(signature: Mapping[str, Any], error: str | None) -> str:
    examples = signature.get("train_examples") or 0
    return "a-few-hundred-or-less" if examples < FEW_EXAMPLES else "thousands"
