"""Variable-length losses. Write the masked means twice, then compare().

losses is a [B, T] float32 or float64 tensor of per-token losses; mask is a [B, T] bool tensor,
True at a real token. Both versions return (per_sequence, overall), in the losses' dtype:

    per_sequence  shape [B]: each row's mean loss over its real tokens; 0 for a row with none
    overall       0-dim: the mean over every real token of the batch (each token weighs the
                  same, whatever its row); 0 when the batch has no real token

What a padded position holds (any number, inf and NaN included) must never reach a result.
masked_means_loop() visits the rows (or tokens) one at a time in Python; masked_means() has no
Python loop over rows or tokens.

compare(loop, vectorised) calls two such functions on random batches it draws itself (a batch
of one row, rows of one position, rows with no real token, float32 and float64, inf and NaN in
the padding) and returns True when they agree on every batch, False as soon as they differ: in
shape, in dtype, in a value by more than rounding (float32: about 1e-6 of it), NaN against a
number. The judge calls it with its own loop and versions of its own, right and wrong.
"""

from collections.abc import Callable

import torch

Means = tuple[torch.Tensor, torch.Tensor]  # (per_sequence, overall)
Version = Callable[[torch.Tensor, torch.Tensor], Means]


def masked_means_loop(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    raise NotImplementedError("write masked_means_loop()")


def masked_means(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    raise NotImplementedError("write masked_means()")


def compare(loop: Version, vectorised: Version) -> bool:
    raise NotImplementedError("write compare()")


if __name__ == "__main__":
    # A local try (the judge ignores this block and calls your functions itself).
    print("the two versions agree:", compare(masked_means_loop, masked_means))
