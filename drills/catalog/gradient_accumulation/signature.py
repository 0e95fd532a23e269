"""What a run of "Gradient accumulation" reports (torch-free, so the description can name it).

The step numbers compare the accumulated step with the reference the code means to reproduce:
the same step taken on one big batch holding all k micro-batches, from the same weights. They
are read at the first step, where every variant starts from the very same weights.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class AccumulationSignature(Signature):
    micro_batches: int | None = None  # k: backward passes counted per optimizer step
    micro_batch_size: int | None = None  # B: examples in each micro-batch
    examples_per_step: int | None = None  # k x B: the big batch the step should equal
    # First step: ||update the accumulated gradient made|| / ||update the big batch made||
    update_ratio: float | None = None
    # First step: <accumulated, big> / ||big||^2, how many big-batch gradients it holds
    grad_scale: float | None = None
    grad_cosine: float | None = None  # first step: 1 means the two point the same way
    grad_max_abs_diff: float | None = None  # first step: max |accumulated - big| over entries
    grad_relative_diff: float | None = None  # first step: ||accumulated - big|| / ||big||
    worst_grad_relative_diff: float | None = None  # the largest relative difference of the run
    # lr x update_ratio: the rate a big-batch step would need to take the step this run takes
    effective_lr: float | None = None
    # 2 / (largest eigenvalue of the training loss's Hessian), closed form for least squares:
    # full-batch gradient descent at a rate above it does not converge
    stability_limit: float | None = None
    best_loss: float | None = None  # the least-squares minimum of the training set (closed form)
    # The loss of the whole training set, at the weights each step starts from:
    initial_loss: float | None = None  # before the first step
    final_loss: float | None = None  # mean of the last 10% of steps
    max_loss: float | None = None  # the highest of the run
    steps_run: int | None = None
    nonfinite_step: int | None = None  # first step whose loss, gradient or update was not finite
