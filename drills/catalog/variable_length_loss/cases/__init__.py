"""Cases on the variable-length-losses drill: a bigram token model on padded sequences whose
batches hold different numbers of tokens. A token sum over a fixed budget reads like a per-token
mean on ordinary batches and leaps on the batch of long documents; a broken batch leaps too, at
its own fixed place in the epoch. A mean of batch means sits a few per cent from the per-token
corpus mean on shuffled batches, close enough to pass for it, until the batches are cut by
length. Only a number read per token, or a change of the lengths or the batching, tells them
apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.variable_length_loss import BROKEN, EVAL_BAND

LEAPS = 2.0  # the last epoch's highest logged loss this many times the median: a leap


def the_leap(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the logged loss still leaps once an epoch."""
    ratio = signature.get("spike_ratio")
    if ratio is None:
        return "no-run"
    return "leaps" if ratio >= LEAPS else "no-leap"


def the_leap_per_token(signature: Mapping[str, Any], error: str | None) -> str:
    """The batch that leaps, read per token: a batch that is bad per token, or an ordinary one."""
    ratio = signature.get("spike_per_token_ratio")
    if ratio is None:
        return "no-run"
    return "high-per-token" if ratio >= BROKEN else "ordinary-per-token"


def the_leaping_batch(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether the batch with the highest logged loss is the epoch's longest."""
    longest = signature.get("spike_is_longest")
    if longest is None:
        return "no-run"
    return "the-longest-batch" if longest else "an-ordinary-batch"


def the_number_against_per_token(signature: Mapping[str, Any], error: str | None) -> str:
    """The evaluation number set beside the per-token corpus mean."""
    gap = signature.get("eval_gap")
    if gap is None:
        return "no-run"
    return "the-same" if abs(gap) <= EVAL_BAND else "off"


CASE_SET = CaseSet(
    drill="variable-length-loss",
    causes=(
        Cause(
            "per-token-throughout",
            "healthy",
            "Nothing is wrong: the loss is a per-token mean at every step and the evaluation "
            "number is the per-token corpus mean, whatever the batching.",
            {},
            "per-token",
            fix="change-nothing",
        ),
        Cause(
            "sum-over-a-budget",
            "evaluation",
            "The loss is the batch's token sum divided by a fixed budget of 64 tokens: ordinary "
            "batches hold about 64 and read like a mean, the batch of long documents holds six "
            "times as many and leaps without any token doing worse.",
            {"reduction": "sum-per-budget"},
            "token-sum",
            fix="divide-by-tokens",
            exercise="per-token-loss",
        ),
        Cause(
            "broken-batch",
            "data",
            "One ordinary batch has its labels moved one token id along: the model cannot fit "
            "them and their loss per token leaps at the same place every epoch.",
            {"bad_batch": "on"},
            "bad-batch",
            fix="repair-the-batch",
        ),
        Cause(
            "mean-of-batch-means",
            "evaluation",
            "The evaluation loop averages each batch's per-token mean with equal weight: on "
            "shuffled batches this lands a few per cent from the per-token corpus mean, and "
            "batches cut by length move it further.",
            {"evaluation": "batch-means"},
            "batch-means",
            fix="weigh-by-tokens",
        ),
    ),
    experiments=(
        Experiment(
            "per-token-beside",
            "Log each batch's per-token mean beside the loss",
            "Compute every batch's loss per real token, by PyTorch's ignore-index mean, and "
            "set it beside the logged loss at every step: does the highest point stand out per "
            "token too?",
            shows=("numbers",),
            observations=("ratio_min", "ratio_max", "spike_ratio", "spike_per_token_ratio"),
            reading=the_leap_per_token,
        ),
        Experiment(
            "tokens-per-batch",
            "Count the tokens of each batch",
            "Count the real (unpadded) tokens of every training batch and find those of the "
            "batch with the highest logged loss in the last epoch.",
            shows=("numbers",),
            observations=("tokens_min", "tokens_max", "spike_tokens", "spike_is_longest"),
            reading=the_leaping_batch,
        ),
        Experiment(
            "equal-lengths",
            "Rerun with every sequence the same length",
            "Train again on sequences that are all 8 tokens long, so every batch holds 64.",
            change=Change(set={"lengths": "equal"}),
            shows=("numbers",),
            observations=("spike_ratio", "final_loss"),
            reading=the_leap,
        ),
        Experiment(
            "lower-rate-4x",
            "Rerun with the learning rate divided by 4",
            "Train again from scratch with a 4 times smaller learning rate.",
            change=Change(scale={"lr": 0.25}),
            shows=("numbers",),
            observations=("spike_ratio", "final_loss", "eval_number"),
            reading=the_leap,
        ),
        Experiment(
            "corpus-per-token",
            "Compute the per-token corpus mean of the evaluation set",
            "Run the trained model over the evaluation set one sequence at a time, with no "
            "batches and no padding, and divide the sum of every token's loss by the number of "
            "tokens: set it beside the evaluation number.",
            shows=("numbers",),
            observations=("eval_number", "eval_per_token", "eval_gap"),
            reading=the_number_against_per_token,
        ),
        Experiment(
            "evaluate-by-length",
            "Evaluate with batches cut by length",
            "Train the same way, then evaluate with the sequences sorted by length before they "
            "are cut into batches: how far does the evaluation number move?",
            change=Change(set={"eval_batching": "by-length"}),
            shows=("numbers",),
            observations=("eval_number", "eval_per_token", "eval_gap"),
            reading=the_number_against_per_token,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the numbers are per token.", Change()),
        Fix(
            "divide-by-tokens",
            "Divide each batch's token sum by its own real token count.",
            Change(replace={"reduction": {"sum-per-budget": "token-mean"}}),
        ),
        Fix(
            "repair-the-batch",
            "Find the batch that leaps and rebuild its labels from the source ids.",
            Change(set={"bad_batch": "off"}),
        ),
        Fix(
            "weigh-by-tokens",
            "Evaluate as one sum over every token divided by the number of tokens.",
            Change(set={"evaluation": "per-token"}),
        ),
        Fix("lower-the-rate", "Divide the learning rate by 4.", Change(scale={"lr": 0.25})),
    ),
    charts=(
        ShownChart("Training loss", "cross-entropy (nats)", {"loss": "training loss"}, log_y=True),
        ShownChart("Evaluation", "cross-entropy (nats)", {"eval_loss": "evaluation loss"}),
    ),
    base={"eval_batching": "shuffled"},
    # How long the run is and its rate: every cause's verdict holds at both ends.
    nuisance={"epochs": (6, 8, 12), "lr": (0.02, 0.03, 0.04)},
    symptom_observations=("eval_number",),
)

CASES = (
    Case(
        "a-loss-that-leaps-once-an-epoch",
        "A loss that leaps once an epoch",
        "A small token model trains on padded sequences in a fixed batch order. The loss falls "
        "as it should, except at one step of every epoch, always the same one, where it leaps "
        "several times higher and falls straight back on the next batch. The team wants to "
        "know whether to worry before the run is scaled up.",
        CASE_SET,
        causes=("sum-over-a-budget", "broken-batch"),
    ),
    Case(
        "an-evaluation-loader-to-speed-up",
        "An evaluation loader to speed up",
        "The team reports each checkpoint's evaluation loss, computed batch by batch on "
        "shuffled batches of 8. To save padding they want the evaluation loader to sort "
        "sequences by length before batching, and ask whether the numbers they report will "
        "still compare with last month's.",
        CASE_SET,
        causes=("per-token-throughout", "mean-of-batch-means"),
    ),
)
