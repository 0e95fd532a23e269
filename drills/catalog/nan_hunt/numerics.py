"""Float32 facts the NaN hunt's description and training code share (torch-free)."""

import math

# exp(x) in float32 rounds to exactly 0 below -150 ln 2 (half the smallest positive float32,
# 2^-149): a logit that far below the top one gets probability 0, and log(0) = -inf.
LOG_UNDERFLOW_GAP = 150 * math.log(2)
