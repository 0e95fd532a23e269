"""The variants of "Check a hand-written gradient" and the tolerances its checks use (torch-free,
so the description and the training code share them)."""

from __future__ import annotations

# The hand-written backward of the custom SELU activation: right, or with one realistic slip.
BACKWARDS = ("correct", "missing-scale", "flipped-sign")
# The vectorised masked mean over padded rows: right, or with one realistic slip.
MASKED_MEANS = ("correct", "padded-length", "padding-summed")

# In float64, central differences with a step of 1e-6 agree with a right derivative to about
# 1e-9 (relative): a thousand times below this. A real slip is orders of magnitude above it.
GRAD_TOLERANCE = 1e-6
# A loop and a vectorised version of the same float64 sums differ only in summation order.
MEAN_TOLERANCE = 1e-9
