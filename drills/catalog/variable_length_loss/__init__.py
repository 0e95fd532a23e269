"""Variable-length losses: which number to read when batches hold different numbers of tokens.

A batch's loss is a sum over its real tokens divided by something. Divided by the batch's own
token count, it is a per-token mean, and batches of any length read alike. Divided by a fixed
count (the number of sequences, a token budget), it is a sum logged as a mean: it rises and falls
with the batch's token count, and a batch of long documents looks like a spike that no token of
it earned. The evaluation number has the same trap one level up: each batch's per-token mean,
averaged with equal weight, is not the per-token corpus mean when the batches differ in length
and short sequences are harder per token; batching the evaluation set by length moves it while
the model stays the same. The per-token corpus mean (every token's loss over every token) is
the number that compares across loaders and collators.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.variable_length_loss.signature import VariableLengthSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    NumericPrediction,
    Observation,
    Reference,
)

REDUCTIONS = ("token-mean", "sum-per-sequence", "sum-per-budget")
EVALUATIONS = ("per-token", "batch-means")
BATCHINGS = ("by-length", "shuffled")
LENGTHS = ("mixed", "equal")

# Thresholds diagnose() reads the numbers with.
# The logged loss is the batch's per-token mean when, at every step, it is within 1e-4 of the
# mean PyTorch's ignore-index reduction computes (measured on seeds 0-4 at the defaults and each
# knob's ends: within 4e-7). A sum over a fixed divisor gives ratios from 0.92 to 50 here.
SAME = 1e-4
# "A fixed divisor": tokens / ratio varies by at most 1e-4 of itself over the run (measured:
# below 1e-6 for both sums; the per-token mean's "divisor" is the token count, 59 to 400).
FIXED = 1e-4
# A batch whose per-token mean is 2.2 times the last epoch's median or more is broken (measured
# on seeds 0-4 at the defaults and each knob's ends: a batch of shifted labels 2.96-3.83 times;
# the hardest healthy batch at most 1.12 times).
BROKEN = 2.2
# The evaluation number is the per-token corpus mean when within 0.5% of it (measured: within
# 1e-7 when it is; a mean of batch means is 1.2-2.7% off on shuffled batches and 5.0-6.1% on
# batches cut by length, at the defaults and each knob's ends).
EVAL_BAND = 0.005
# "Learned": the per-token corpus mean within 25% of what a perfect model reaches (measured:
# 4-10% above it at the defaults and each knob's ends, 9-21% with a broken batch in, 3.2 times
# it before the first step).
LEARNED = 1.25
# Hypotheses whose logged loss moves with the token count: the correlation reference is theirs.
SUMMED = ("token-sum",)


class VariableLengthLoss(Drill):
    slug = "variable-length-loss"
    position = 67
    title = "Variable-length losses"
    summary = (
        "Batches of different lengths: is the logged loss per token, and is the evaluation "
        "number the per-token corpus mean?"
    )
    symptom = (
        "A token model trains on padded sequences of very different lengths. Once every epoch "
        "the logged loss leaps several times higher and falls straight back, and the "
        "evaluation number moved when the evaluation loader started grouping sequences by "
        "length."
    )
    scenario = (
        "A bigram token model learns sequences whose first token is random (ln 16 nats at best) "
        "and whose later tokens each have two equally likely successors (ln 2): short sequences "
        "are harder per token. 16 training batches of 8 in a fixed order every epoch: the "
        "loader keeps the long documents in a batch of their own and shuffles the rest. Beside "
        "each step the drill measures the batch's per-token mean, and after training the "
        "per-token corpus mean of the evaluation set, one sequence at a time. Choose how the "
        "loss is reduced and how the evaluation number is averaged, predict what the logged "
        "curve and the evaluation number do, then run it."
    )
    version = "1"
    healthy = "per-token"
    signature_type = VariableLengthSignature
    knobs = (
        Knob(
            "reduction",
            "choice",
            "token-mean",
            "How a batch's token losses become the loss that is backpropagated and logged: "
            "token-mean (their sum over the batch's real tokens); sum-per-sequence (their sum "
            "over the 8 sequences); sum-per-budget (their sum over a fixed budget of 64 tokens, "
            "an ordinary batch's count).",
            choices=REDUCTIONS,
        ),
        Knob(
            "evaluation",
            "choice",
            "per-token",
            "How the evaluation loop turns its batches into one number: per-token (every "
            "token's loss over every token); batch-means (the mean of each batch's per-token "
            "mean, every batch weighted alike).",
            choices=EVALUATIONS,
        ),
        Knob(
            "eval_batching",
            "choice",
            "by-length",
            "How the evaluation set is cut into batches of 8: by-length (sorted first, as a "
            "padding-saving collator does); shuffled.",
            choices=BATCHINGS,
        ),
        Knob(
            "lengths",
            "choice",
            "mixed",
            "mixed: sequences of 7 to 9 tokens, and one batch's worth of documents of 40 to 56; "
            "equal: every sequence 8 tokens long.",
            choices=LENGTHS,
        ),
        Knob(
            "bad_batch",
            "choice",
            "off",
            "on: one ordinary training batch has every label moved to the next token id, as a "
            "botched id mapping does.",
            choices=("off", "on"),
        ),
        Knob("epochs", "int", 8, "Passes over the 16 training batches.", minimum=3, maximum=20),
        Knob(
            "lr",
            "float",
            0.02,
            "Adam learning rate (Adam's step does not grow with a constant scale of the loss).",
            minimum=0.005,
            maximum=0.05,
            log_scale=True,
        ),
    )
    hypotheses = (
        Hypothesis(
            "per-token",
            "The loss is read per token throughout: at every step the logged loss is the "
            "batch's per-token mean, no batch's per-token mean stands 2.2 times above the last "
            "epoch's median, the evaluation number is the per-token corpus mean (within 0.5%), "
            "and the model has learned (that mean is within 25% of a perfect model's).",
        ),
        Hypothesis(
            "token-sum",
            "A sum logged as a mean: the batch's token losses are summed and divided by the same "
            "number at every step (the sequences, or a token budget), not by the batch's own "
            "tokens. The logged loss is the per-token mean times the token count over that "
            "number, so it rises and falls with the batch's length: a batch of long documents "
            "reads several times higher without a single token doing worse.",
        ),
        Hypothesis(
            "bad-batch",
            "The logged loss is the per-token mean, yet one batch's per-token mean stands 2.2 "
            "times or more above the last epoch's median: being per token, no length explains "
            "it; the batch itself (its labels) is broken.",
        ),
        Hypothesis(
            "batch-means",
            "The training loss is logged per token and no batch stands out, but the evaluation "
            "number is the mean of the batches' per-token means and more than 0.5% off the "
            "per-token corpus mean: every batch weighs the same whatever its tokens, and the "
            "batches differ in length, so how the set is cut into batches moves the number.",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet: the logged loss is neither the per-token mean nor a sum over one "
            "fixed number, or the evaluation number is neither the per-token corpus mean nor "
            "the mean of batch means, or the model has not learned enough (its per-token corpus "
            "mean more than 25% above a perfect model's) for the lengths to make a difference: "
            "a larger rate or more epochs decide.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Training loss: what the loop logs, and the batch's per-token mean",
            ("loss", "per_token"),
            "cross-entropy (nats)",
            log_y=True,
            labels={"loss": "logged loss", "per_token": "the batch's per-token mean"},
        ),
        Chart(
            "tokens",
            "Real tokens in each training batch",
            ("tokens",),
            "tokens",
            labels={"tokens": "tokens in the batch"},
        ),
        Chart(
            "eval",
            "Evaluation after each epoch: the loop's number and the per-token corpus mean",
            ("eval_loss", "eval_per_token"),
            "cross-entropy (nats)",
            references=(Reference("a perfect model, per token", "best_per_token"),),
            labels={"eval_loss": "evaluation number", "eval_per_token": "per-token corpus mean"},
        ),
    )
    observations = (
        Observation("tokens_min", "Fewest real tokens in a training batch"),
        Observation("tokens_max", "Most real tokens in a training batch"),
        Observation("ratio_min", "Lowest logged loss / the batch's per-token mean"),
        Observation("ratio_max", "Highest logged loss / the batch's per-token mean"),
        Observation("divisor_min", "Smallest number the token sum was divided by"),
        Observation("divisor_max", "Largest number the token sum was divided by"),
        Observation(
            "loss_tokens_correlation",
            "Last epoch: correlation of the logged loss with the batch's tokens",
        ),
        Observation(
            "per_token_tokens_correlation",
            "Last epoch: correlation of the per-token mean with the batch's tokens",
        ),
        Observation("spike_ratio", "Last epoch: highest logged loss / the median"),
        Observation("spike_tokens", "Last epoch: tokens of the batch with the highest logged loss"),
        Observation("spike_is_longest", "Is that batch the epoch's longest?"),
        Observation(
            "spike_per_token_ratio", "That batch's per-token mean / the epoch's median one"
        ),
        Observation("eval_number", "Evaluation number the loop reports", "eval_per_token"),
        Observation(
            "eval_per_token",
            "Per-token corpus mean of the evaluation set (one sequence at a time)",
            "best_per_token",
        ),
        Observation(
            "eval_batch_means",
            "Mean of the evaluation batches' per-token means",
            "best_batch_means",
            reference_for=("batch-means",),
        ),
        Observation("eval_gap", "Evaluation number / per-token corpus mean - 1"),
        Observation("initial_eval_per_token", "Per-token corpus mean before training"),
        Observation("final_loss", "Logged loss, mean of the last 10% of steps"),
    )
    numeric_predictions = (
        NumericPrediction(
            "eval_per_token",
            "Where will the evaluation set's per-token corpus mean settle?",
            "nats per token",
            "A perfect model pays ln 16 for a sequence's first token and ln 2 for each later "
            "one; count what that comes to per token over sequences of these lengths.",
            reported_as="the per-token corpus mean settled at",
            relative_band=0.15,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        # What the loop logs first: it is measured at every step, whatever the model learned.
        low, high = signature.get("ratio_min"), signature.get("ratio_max")
        if low is None or high is None:
            return "inconclusive"
        if not (abs(low - 1.0) <= SAME and abs(high - 1.0) <= SAME):
            smallest, largest = signature.get("divisor_min"), signature.get("divisor_max")
            fixed = smallest and largest and (largest - smallest) <= FIXED * smallest
            return "token-sum" if fixed else "inconclusive"
        broken = signature.get("spike_per_token_ratio")
        if broken is not None and broken >= BROKEN:
            return "bad-batch"
        number, per_token = signature.get("eval_number"), signature.get("eval_per_token")
        means, best = signature.get("eval_batch_means"), signature.get("best_per_token")
        if number is None or not per_token or not means or not best:
            return "inconclusive"
        if abs(number / per_token - 1.0) > EVAL_BAND:
            return "batch-means" if abs(number / means - 1.0) <= 1e-6 else "inconclusive"
        return "per-token" if per_token <= LEARNED * best else "inconclusive"


DRILL = VariableLengthLoss()
