"""What a run of "Variable-length losses" reports (torch-free, so the description can name it).

Three questions, each answered from measured numbers. What the loop logs per batch, set beside
that batch's per-token mean computed separately (by PyTorch's own ignore-index mean): equal, or
a token sum over a fixed divisor? Whether the logged loss moves with the batch's token count,
and whether the highest logged loss of the last epoch is the longest batch, or a batch whose
loss per token is high too. And the evaluation number against the per-token corpus mean,
computed one sequence at a time, with no batches and no padding at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class VariableLengthSignature(Signature):
    # Real (unpadded) target tokens per training batch, over the run.
    tokens_min: int | None = None
    tokens_max: int | None = None
    # The logged loss / the same batch's per-token mean, lowest and highest over every step:
    # 1 and 1 when the loop logs the per-token mean.
    ratio_min: float | None = None
    ratio_max: float | None = None
    # tokens / ratio: what the batch's token sum was divided by, lowest and highest over every
    # step (the token count itself for a per-token mean; one fixed number for a sum).
    divisor_min: float | None = None
    divisor_max: float | None = None
    # Pearson correlation with the batch's token count over the last epoch: of the logged loss,
    # and of the per-token mean (None when every batch holds as many tokens).
    loss_tokens_correlation: float | None = None
    per_token_tokens_correlation: float | None = None
    # The last epoch's highest logged loss: over the epoch's median logged loss; its step and
    # tokens; whether it is the epoch's longest batch; its per-token mean over the median one.
    spike_ratio: float | None = None
    spike_step: int | None = None
    spike_tokens: int | None = None
    spike_is_longest: bool | None = None
    spike_per_token_ratio: float | None = None
    # The evaluation set after training:
    eval_number: float | None = None  # what the evaluation loop reports
    eval_per_token: float | None = (
        None  # sum of every token's loss / tokens, one sequence at a time
    )
    eval_batch_means: float | None = None  # the mean of the evaluation batches' per-token means
    eval_gap: float | None = None  # eval_number / eval_per_token - 1
    # Closed forms from the evaluation set's lengths: a perfect model's per-token corpus mean,
    # and its mean of batch means under this run's evaluation batching.
    best_per_token: float | None = None
    best_batch_means: float | None = None
    initial_eval_per_token: float | None = None  # before the first step
    final_loss: float | None = None  # the logged loss, mean of the last 10% of steps
    steps_run: int | None = None
    nonfinite_step: int | None = None
