"""Cases on the loss-vs-metric drill: the loss improves (or does not) while the reported number
stays put, or only seems to.

Each symptom has look-alikes found by real runs. An accuracy of 91-95% under a loss near 0.2
comes from a model that never names a rare class of 5%, from a loader that skips most of a
rare class the file holds as often as the other (the very same run), or from a sound one whose
rare class (12%) lies far enough from the other to be found: the answers it gives tell the
sound one, and only counting the classes in the file against what the loader yields tells the
other two apart. An exact
match stuck at zero under a falling loss comes from references with two answers per letter, or
from inputs cut short so that the last letters are guesses: the letters right at each position
tell. A loss that never leaves its start comes from a learning rate of zero, or from one far
too small: whether the weights moved at all tells."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart

# A class named in under 2% of the answers is (nearly) never named.
RARELY_NAMED = 0.02
# Letters: over half right is learning (chance is 1 in 16); whole sequences right 5% or more is
# a score that moves.
LETTERS_LEARNED = 0.5
SEQUENCES_SCORED = 0.05
# Positions whose letters are right at rates this far apart are not all equally hard: the model
# sees some letters it does not see at others.
POSITIONS_APART = 0.3
# A loader that yields the rare class at under half its share in the file is losing its rows.
LOST_ON_LOAD = 0.5


def answer_mix(signature: Mapping[str, Any], error: str | None) -> str:
    """How often the classifier names each class (sequence tasks have no classes to count)."""
    share = signature.get("predicted_minority_share")
    if share is None:
        return "no-classes"
    return "one-class-only" if min(share, 1 - share) < RARELY_NAMED else "both-classes"


def rows_on_load(signature: Mapping[str, Any], error: str | None) -> str:
    in_file, loaded = signature.get("file_minority_share"), signature.get("loaded_minority_share")
    if in_file is None or loaded is None:
        return "no-classes"
    return "rare-rows-lost" if loaded < LOST_ON_LOAD * in_file else "every-row-loaded"


def letters_and_sequences(signature: Mapping[str, Any], error: str | None) -> str:
    letters, sequences = signature.get("token_accuracy"), signature.get("exact_match")
    if letters is None or sequences is None:
        return "no-letters"
    if sequences >= SEQUENCES_SCORED:
        return "sequences-right"
    if letters >= LETTERS_LEARNED:
        return "letters-right-sequences-wrong"
    return "letters-at-chance"


def letters_by_position(signature: Mapping[str, Any], error: str | None) -> str:
    low, high = signature.get("position_accuracy_low"), signature.get("position_accuracy_high")
    if low is None or high is None:
        return "no-letters"
    return "positions-differ" if high - low > POSITIONS_APART else "positions-alike"


def weights_moved(signature: Mapping[str, Any], error: str | None) -> str:
    return "weights-moved" if (signature.get("weight_change") or 0.0) > 0.0 else "weights-unchanged"


CASE_SET = CaseSet(
    drill="loss-vs-metric",
    causes=(
        Cause(
            "nothing-wrong",
            "healthy",
            "Nothing is wrong: the model learns to tell both classes apart, and the loss and "
            "the score move together.",
            # A rare class (12%) that lies well apart from the common one: the model finds
            # about half of it, and by merit its accuracy and loss land where a majority vote's
            # on a rarer class (5%) do.
            {"task": "imbalanced", "minority_fraction": 0.12, "separation": 2.0},
            "aligned",
            fix="change-nothing",
        ),
        Cause(
            "rare-class-swamped",
            "evaluation",
            "One class is rare and overlaps the common one, so even a good model almost always "
            "answers the common class: accuracy cannot move while the loss sharpens the "
            "probabilities.",
            {"task": "imbalanced", "minority_fraction": 0.05},
            "majority-vote",
            fix="balance-the-classes",
            exercise="loss-vs-metric-rare-class",
        ),
        Cause(
            "rare-rows-skipped-on-load",
            "data",
            "The data file holds both classes equally often, but the loader skips rows with an "
            "empty field, and nearly every rare-class row has one: training and evaluation see "
            "a class of 5%, too rare and too mixed with the other for the model to ever name.",
            # Trains and scores the very rows a file of 5% rare rows gives (the test compares
            # the metrics): only the classes counted in the file and after the loader differ.
            {"task": "imbalanced", "minority_fraction": 0.5, "loader": "drops-incomplete"},
            "majority-vote",
            fix="load-every-row",
        ),
        Cause(
            "all-or-nothing-score",
            "evaluation",
            "Each letter has a second accepted answer, but a sequence only scores when it "
            "matches the one reference letter for letter: even a perfect model almost never "
            "does.",
            {"task": "exact-match"},
            "every-token",
            fix="one-answer-per-letter",
        ),
        Cause(
            "input-cut-short",
            "data",
            "The inputs are cut short before they reach the model: it sees the first 8 letters "
            "of each code and must guess the rewrite of the last 4, so whole sequences are "
            "never right.",
            {"task": "exact-match-clean", "input_length": 8},
            "every-token",
            fix="feed-every-letter",
        ),
        Cause(
            "zero-step-size",
            "optimizer",
            "The learning rate is zero: every step leaves the weights exactly where they were.",
            {"task": "exact-match-clean", "lr": 0.0},
            "not-learning",
            fix="nonzero-learning-rate",
        ),
        Cause(
            "step-size-too-small",
            "optimizer",
            "The learning rate is a thousand times too small: the weights do move, but 200 "
            "steps barely take the loss off its start.",
            # At 1e-4 the loss falls from 2.77 to 2.74, enough to stretch the chart's height:
            # the gap a flat run's chart can show between its batches and the evaluation set
            # never showed, so a rate of zero's draw with one was told apart on sight. At 1e-5
            # the curve is as flat as a rate of zero's.
            {"task": "exact-match-clean", "lr": 1e-5},
            "not-learning",
            fix="raise-learning-rate",
        ),
    ),
    experiments=(
        Experiment(
            "answer-mix",
            "Count the answers the classifier gives",
            "On the evaluation set, count how often the model names each class and how many "
            "examples of each class it finds.",
            shows=("numbers",),
            observations=("predicted_minority_share", "minority_recall"),
            reading=answer_mix,
        ),
        Experiment(
            "count-classes-on-load",
            "Count the classes in the file and after the loader",
            "Count the rare class's share among the training rows of the data file, and among "
            "the rows the loader hands to training.",
            shows=("numbers",),
            observations=("file_minority_share", "loaded_minority_share"),
            reading=rows_on_load,
        ),
        Experiment(
            "per-letter-score",
            "Score letters one by one",
            "Next to whole-sequence exact match, score the share of letters that are right.",
            shows=("numbers",),
            observations=("token_accuracy", "exact_match"),
            reading=letters_and_sequences,
        ),
        Experiment(
            "per-position-score",
            "Score each position on its own",
            "Score the share of right letters at each of the 12 positions separately, and "
            "compare the weakest position with the strongest.",
            shows=("numbers",),
            observations=("position_accuracy_low", "position_accuracy_high"),
            reading=letters_by_position,
        ),
        Experiment(
            "parameter-health",
            "Per-parameter health table",
            "For every parameter tensor: its gradient, and how far the optimizer moved it.",
            shows=("parameters", "numbers"),
            observations=("weight_change",),
            reading=weights_moved,
        ),
        Experiment(
            "balanced-rerun",
            "Retrain on balanced classes",
            "Train and evaluate again with both classes equally common (the sequence tasks "
            "have no classes: they run unchanged).",
            change=Change(set={"minority_fraction": 0.5}),
            shows=("numbers",),
            observations=("eval_loss", "accuracy", "exact_match"),
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the training is sound.", Change()),
        Fix(
            "balance-the-classes",
            "Rebalance the data so that both classes are equally common.",
            Change(replace={"minority_fraction": {0.05: 0.5}}),
        ),
        Fix(
            "load-every-row",
            "Let the loader keep rows with an empty field: the model does not read that field.",
            Change(replace={"loader": {"drops-incomplete": "keeps-all"}}),
        ),
        Fix(
            "one-answer-per-letter",
            "Clean the references so that each letter has a single accepted answer.",
            Change(replace={"task": {"exact-match": "exact-match-clean"}}),
        ),
        Fix(
            "feed-every-letter",
            "Let the encoder pass all 12 input letters to the model.",
            Change(replace={"input_length": {8: 12}}),
        ),
        Fix(
            "nonzero-learning-rate",
            "Set the learning rate to 0.01.",
            Change(replace={"lr": {0.0: 0.01}}),
        ),
        Fix(
            "raise-learning-rate",
            "Raise the learning rate a hundredfold so training gets going.",
            Change(scale={"lr": 100.0}),
        ),
        Fix(
            "train-longer",
            "Train for twice as many steps.",
            Change(),  # the runs have a fixed length: a plausible change that alters nothing
        ),
    ),
    charts=(
        ShownChart(
            "Loss",
            "cross-entropy (nats)",
            {"loss": "training batches", "eval_loss": "evaluation set"},
        ),
        ShownChart(
            "Reported score on the evaluation set",
            "share",
            {"metric:accuracy": "accuracy", "metric:exact match": "exact match"},
        ),
    ),
    base={"task": "imbalanced", "minority_fraction": 0.5},
    # Rates at which every cause keeps its reading. At 0.02 the two-answer references end near
    # 1.2 nats, above every run of inputs cut short (about 1.05), and the loss alone would tell.
    nuisance={"lr": (0.005, 0.0075, 0.01)},
    symptom_observations=("final_loss", "eval_loss", "accuracy", "exact_match"),
)

CASES = (
    Case(
        "a-screening-classifier",
        "A screening classifier's first run",
        "You train a small screening classifier that sorts examples into positives and negatives, "
        "and measure its accuracy every few steps. Decide whether the run can be trusted before "
        "its numbers go to the team that will use it.",
        CASE_SET,
        causes=("rare-class-swamped", "rare-rows-skipped-on-load", "nothing-wrong"),
    ),
    Case(
        "a-code-rewriter",
        "A model that rewrites codes",
        "You train a small model to rewrite 12-letter codes, one output letter per input letter, "
        "and score the share of rewrites that come out fully right. A teammate thinks the scoring "
        "code is broken: look at the run.",
        CASE_SET,
        causes=(
            "all-or-nothing-score",
            "input-cut-short",
            "zero-step-size",
            "step-size-too-small",
        ),
    ),
)
