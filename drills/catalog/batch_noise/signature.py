"""What a run of "Batch size and noise" reports (torch-free, so the description can name it).

Two kinds of number. The spread numbers come from a probe at fixed weights (the weights just
before the run's largest spike): thousands of batches of each size are drawn from the training
set with replacement and put through the model, and the standard deviation of their losses is
set beside the closed form, the per-example losses' standard deviation over √B. The spike
numbers read the training run itself: each step's batch loss against the whole training set's
losses at the very weights that batch met.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class BatchNoiseSignature(Signature):
    batch_size: int | None = None  # B: examples per optimizer step
    steps_run: int | None = None
    # The whole training set's loss at the weights each step starts from:
    initial_loss: float | None = None  # before the first step
    final_loss: float | None = None  # mean of the last 10% of steps
    # The largest spike: the step whose batch loss stands highest above the training set's mean
    # loss at the same weights, in units of the spread a batch of B has there (σ / √B).
    spike_step: int | None = None
    spike_loss: float | None = None  # that batch's loss
    spike_set_loss: float | None = None  # the training set's mean loss at the same weights
    spike_sigmas: float | None = None  # (spike_loss - spike_set_loss) / (σ / √B)
    # The highest loss any batch of B training examples could have had at those weights (the
    # mean of the B largest per-example losses), and the spike's loss over it: a batch drawn
    # from the training set can never pass 1.
    worst_batch_loss: float | None = None
    spike_over_worst: float | None = None
    # The largest rise of the whole training set's loss over one step, as a share of it: one
    # batch's step should barely move the loss of the whole set.
    set_loss_jump: float | None = None
    set_loss_jump_step: int | None = None
    # The probe at the weights before the spike: the per-example losses' standard deviation σ,
    # the measured spread of batch losses for B = 1, 2, 4, ..., 64, and the log-log fit.
    per_example_std: float | None = None
    probe_batches: int | None = None  # batches drawn per batch size
    spread_at_1: float | None = None  # measured std of the batch loss at B = 1
    spread_at_64: float | None = None  # the same at B = 64
    spread_slope: float | None = None  # least-squares slope of log(spread) against log(B)
    slope_theory: float | None = None  # -1/2: spread = σ / √B
    # The largest |measured spread / (σ / √B) - 1| over the probed batch sizes.
    worst_spread_error: float | None = None
    nonfinite_step: int | None = None
