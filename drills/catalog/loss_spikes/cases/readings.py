"""How the loss-spikes cases read an experiment's run: each reading boils what the experiment
shows down to a short key, and two causes whose keys differ are told apart by it."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

RECUR_EPOCHS = 3  # a place that spiked in this many epochs recurs
MANY = 3  # this many spikes that do not line up are not noise
REPLAY_RATIO = 3.0  # the suspect batch's replayed loss at least 3x a normal batch's ...
REPLAY_RISE = 0.5  # ... and half a nat above it
CUT_SHARE = 0.7  # spike steps cut to 70% or less of the update their gradient asked for


def recurs(signature: Mapping[str, Any]) -> bool:
    count = signature.get("spike_count") or 0
    repeats = signature.get("spike_repeats") or 0
    return repeats >= RECUR_EPOCHS and repeats >= 0.5 * count


def where_spikes_land(signature: Mapping[str, Any], error: str | None) -> str:
    """Where in the epoch the spikes land, from the list of spike steps."""
    if signature.get("nonfinite_step") is not None:
        return "blew-up"
    if recurs(signature):
        return "same-place-every-epoch"
    if (signature.get("spike_count") or 0) >= MANY:
        return "scattered"
    return "hardly-any"


def replay_suspect_step(signature: Mapping[str, Any], error: str | None) -> str:
    """From the same checkpoint: does the batch that spiked spike again where a normal one does
    not?"""
    suspect = signature.get("replay_suspect_loss")
    normal = signature.get("replay_normal_loss")
    if suspect is None or normal is None:
        return "nothing-to-replay"
    if suspect >= REPLAY_RATIO * normal and suspect - normal >= REPLAY_RISE:
        return "suspect-batch-jumps-again"
    return "both-batches-alike"


def after_lowering_the_rate(signature: Mapping[str, Any], error: str | None) -> str:
    """The curve after a 10x smaller learning rate."""
    if signature.get("nonfinite_step") is not None or (
        not recurs(signature) and (signature.get("spike_count") or 0) >= MANY
    ):
        return "still-jumps-anywhere"
    count = signature.get("spike_count") or 0
    repeats = signature.get("spike_repeats") or 0
    if repeats >= 2 and repeats >= 0.5 * count:
        return "jumps-stay-in-place"  # fewer, smaller steps: fewer epochs show it, same place
    return "calm"


def batch_on_disk_and_loaded(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the labels training received are the labels the data file holds."""
    changed = signature.get("loader_changed_labels")
    if changed is None:
        return "nothing-compared"
    return "loader-changes-labels" if changed > 0 else "loader-yields-stored-labels"


def rate_in_the_optimizer(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the optimizer steps with the rate the settings ask for."""
    asked, used = signature.get("configured_lr"), signature.get("optimizer_lr")
    if asked is None or used is None:
        return "nothing-read"
    return "configured-rate" if math.isclose(asked, used) else "another-rate"


def spike_step_size(signature: Mapping[str, Any], error: str | None) -> str:
    """What the spike steps did against what their gradient asked for."""
    share = signature.get("spike_update_share")
    if share is not None and share <= CUT_SHARE:
        return "spike-steps-cut-short"
    return "spike-steps-full-size"
