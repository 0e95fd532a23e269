"""Readings that more than one case set gives an experiment: what its run showed, as a short key
(see Experiment.reading in contract.py)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def distinct_rows(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the training rows are as many different examples, or repeat fewer. The drill
    counts both: `train_examples` rows holding `distinct_examples` different ones."""
    rows, distinct = signature.get("train_examples"), signature.get("distinct_examples")
    if rows is None or distinct is None:
        return "no-numbers"
    return "some-rows-repeat" if distinct < rows else "all-rows-different"


def eval_twice(signature: Mapping[str, Any], error: str | None) -> str:
    """Two eval-mode passes of the trained model over the same data, compared bit for bit
    (`eval_repeatable`): they differ only when dropout or noise ignores eval mode."""
    repeatable = signature.get("eval_repeatable")
    if repeatable is None:
        return "no-model-to-run"
    return "same-outputs" if repeatable else "outputs-differ"


def shared_examples(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether an exact-match search finds validation examples among the training ones
    (`duplicates_found`)."""
    return "some-shared" if (signature.get("duplicates_found") or 0) > 0 else "none-shared"
