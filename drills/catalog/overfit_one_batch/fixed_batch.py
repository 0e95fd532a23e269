"""Is the "fixed" batch really fixed? The check of an overfit loop's batch, step by step.

An overfit check trains on one batch over and over, so everything the step reads should be the
same at every step: the batch the loop holds (a dict of tensors, as a loader hands it out), the
input the model is given, and, where dropout or augmentation draw random numbers, the random
state they draw from. Each is compared bit for bit with the first step's: a loop that writes
into the batch it reuses shows up in the first, randomness left on in the other two, and
randomness reseeded before every step in none of them (the same noise and the same dropout
masks, step after step).
"""

from __future__ import annotations

import torch

from drills.catalog.overfit_one_batch.signature import OverfitSignature

Held = dict[str, torch.Tensor]


def _snapshot(held: Held) -> Held:
    return {key: value.detach().clone() for key, value in held.items()}


def _same(a: Held, b: Held) -> bool:
    return a.keys() == b.keys() and all(torch.equal(a[key], b[key]) for key in a)


class FixedBatchWatch:
    """Counts the steps whose batch, model input or random state differ from the first step's."""

    def __init__(self, held: Held) -> None:
        self.first_batch = _snapshot(held)
        self.first_input: torch.Tensor | None = None
        self.first_rng: torch.Tensor | None = None
        self.steps = 0
        self.batch_changed = self.input_changed = self.rng_changed = 0
        self.first_changed_step: int | None = None
        self.changed_keys: set[str] = set()  # which of the batch's tensors ever differed
        self.augmented = False

    def step_starts(self, held: Held) -> None:
        """At the start of a step (after any reseeding): the batch and torch's random state."""
        rng = torch.random.get_rng_state()
        if self.first_rng is None:
            self.first_rng = rng
        elif not torch.equal(rng, self.first_rng):
            self.rng_changed += 1
        if not _same(held, self.first_batch):
            self.changed_keys |= {
                key
                for key in held
                if key not in self.first_batch or not torch.equal(held[key], self.first_batch[key])
            }
            self.batch_changed += 1
            if self.first_changed_step is None:
                self.first_changed_step = self.steps
        self.steps += 1

    def model_input(self, x: torch.Tensor, held: Held) -> None:
        """The input the model is given this step, against the first step's and the batch's."""
        if self.first_input is None:
            self.first_input = x.detach().clone()
            # Noise added on top of the batch: the input is not the held features themselves.
            self.augmented = not torch.equal(x, held["features"])
        elif not torch.equal(x, self.first_input):
            self.input_changed += 1

    def fill(self, signature: OverfitSignature, held: Held, loaded: torch.Tensor) -> None:
        """The counts, and how far the held features ended from the batch as it was loaded."""
        signature.batch_changed_steps = self.batch_changed
        signature.first_batch_change = self.first_changed_step
        signature.changed_tensors = ", ".join(sorted(self.changed_keys)) or None
        signature.input_changed_steps = self.input_changed
        signature.rng_changed_steps = self.rng_changed
        signature.inputs_augmented = self.augmented
        size = float(loaded.double().norm())
        drift = float((held["features"].double() - loaded.double()).norm())
        signature.batch_drift = drift / size if size > 0 else drift
