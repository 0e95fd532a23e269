"""How one learning rate's curve is named (flat, falls, spikes, non-finite), read from its numbers
alone. Shared by the drill's description (diagnose) and its training code (the per-rate table);
torch-free."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.core.knobs import MAX_LIST_VALUES

# Thresholds rate_verdict() reads one rate's curve with.
FLAT_BELOW = 0.10  # the loss fell by less than 10% of where it started: the rate barely acted
SPIKE_ABOVE = 1.5  # at some step the loss stood 50% above where it started: it jumped up

# What one rate did, as rate_verdict() names it.
NONFINITE, SPIKES, FLAT, FALLS = "non-finite", "spikes", "flat", "falls"
UNSTABLE = (NONFINITE, SPIKES)

# Per-rate numbers go into numbered slots (1 = smallest rate) so that every run of the drill
# has the same signature keys, whatever the number of rates swept.
SLOT_FIELDS = ("lr", "final_loss", "loss_drop", "max_loss", "nonfinite_step")
SLOTS = range(1, MAX_LIST_VALUES + 1)


def slot_key(field: str, slot: int) -> str:
    return f"{field}_{slot}"


def rate_verdict(
    initial_loss: float, final_loss: float, max_loss: float, nonfinite_step: int | None
) -> str:
    """Name what one rate did to the loss, from its numbers alone."""
    if nonfinite_step is not None:
        return NONFINITE
    if max_loss > SPIKE_ABOVE * initial_loss or final_loss > initial_loss:
        return SPIKES
    if (initial_loss - final_loss) / initial_loss < FLAT_BELOW:
        return FLAT
    return FALLS


def verdicts(signature: Mapping[str, Any]) -> list[str]:
    """rate_verdict() for every filled slot of a signature, smallest rate first."""
    initial = signature.get("initial_loss")
    found = []
    for slot in SLOTS:
        final = signature.get(slot_key("final_loss", slot))
        peak = signature.get(slot_key("max_loss", slot))
        if initial is None or final is None or peak is None:
            continue
        found.append(
            rate_verdict(initial, final, peak, signature.get(slot_key("nonfinite_step", slot)))
        )
    return found
