"""Loss vs metric: the loss a model is trained on and the number it is judged by can part ways.

Cross-entropy rewards every bit of probability moved towards the right answer; accuracy and
exact match only count answers that cross a line. On imbalanced classes the line is rarely
crossed for the minority; on sequences, one wrong token voids the whole answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.loss_vs_metric.signature import LossVsMetricSignature
from drills.core.contract import Chart, Drill, Hypothesis, Knob, Observation

TASKS = ("imbalanced", "exact-match", "exact-match-clean")

# Thresholds diagnose() reads the numbers with.
# The evaluation loss against its start: a fall of 10% or more (or ending below 95% of a
# constant answer's loss) is learning; under 2% is none; in between, 200 steps of slow learning
# cannot be told from none, and the run says so.
LEARNED_FALL = 0.10
NO_FALL = 0.02
NO_BETTER_THAN = 0.95
# Accuracy against the constant answer, in standard errors of the evaluation set: under 2, the
# gain is what luck in drawing the examples gives; 3 or more, and at least 2 points of
# accuracy, the metric has clearly moved. In between this run cannot tell the two apart.
NOISE_Z = 2.0
CLEAR_Z = 3.0
CLEAR_GAIN = 0.02
FLAT_BELOW = 0.05  # exact match under 5%: the metric has not moved off the floor
# A majority vote names the rare class in at most 5% of its answers and finds at most one rare
# example in ten. At the default separation (1), trained at 0.01 on 5% or fewer rare examples
# the model finds under 2% of them;
# on 20% it finds 11-26%, as many as the best possible classifier (17-21%), each paid for by a
# false alarm, so accuracy stays at the majority share without the model being a majority vote.
RARELY_NAMED = 0.05
FEW_FOUND = 0.10


class LossVsMetric(Drill):
    slug = "loss-vs-metric"
    position = 100
    title = "Loss vs metric"
    summary = "The loss keeps improving while the number you report does not move."
    symptom = (
        "Training looks healthy, the loss goes down, yet the metric you report is stuck: "
        "accuracy frozen at one value, or exact match at zero."
    )
    scenario = (
        "Two small tasks. Imbalanced: a classifier separates a rare class from a common one, "
        "on features where the two overlap (a lot, unless you move them apart); it is judged "
        "by accuracy. Exact match: a "
        "model rewrites 12 letters, each of which has a main answer (70% of the time) and an "
        "alternative (or, in the clean variant, only its main answer); it is judged by "
        "whole-sequence exact match. Predict what the loss and the metric will do, then run it "
        "and read the confusion matrix or the per-sequence error counts."
    )
    version = "5"
    # The fixed side: balanced classes (minority_fraction=0.5), where accuracy follows the loss.
    healthy = "aligned"
    signature_type = LossVsMetricSignature
    knobs = (
        Knob(
            "task",
            "choice",
            "imbalanced",
            "imbalanced: a two-class classifier scored by accuracy and minority recall; "
            "exact-match: a 12-letter rewriting task scored by whole-sequence exact match, where "
            "each letter has a second answer 30% of the time; exact-match-clean: the same task "
            "with one answer per letter.",
            choices=TASKS,
        ),
        Knob(
            "minority_fraction",
            "float",
            0.05,
            "Share of the rare class in the imbalanced task (0.5 is balanced). The exact-match "
            "tasks ignore it.",
            minimum=0.01,
            maximum=0.5,
            log_scale=True,
        ),
        Knob(
            "separation",
            "float",
            1.0,
            "How far apart the two classes lie in the imbalanced task, in standard deviations "
            "of the noise: at 1 they overlap so much that even the best classifier rarely names "
            "the rare class; from 2.5 on most rare examples can be told apart. The exact-match "
            "tasks ignore it.",
            minimum=0.5,
            maximum=4.0,
        ),
        Knob(
            "loader",
            "choice",
            "keeps-all",
            "keeps-all: the loader yields every row of the data file; drops-incomplete: it "
            "skips rows with an empty field, and in this data 18 of every 19 rare-class rows "
            "have one (they come from a second source), so training and evaluation see a far "
            "rarer class than the file holds. The exact-match tasks ignore it.",
            choices=("keeps-all", "drops-incomplete"),
        ),
        Knob(
            "input_length",
            "int",
            12,
            "How many of the 12 input letters reach the model in the exact-match tasks, from "
            "the left; the rest arrive blank, as when an encoder cuts its input short (the "
            "answers keep all 12). The imbalanced task ignores it.",
            minimum=0,
            maximum=12,
        ),
        Knob(
            "lr",
            "float",
            1e-2,
            "Adam's learning rate, for either task (0 is allowed: nothing moves).",
            minimum=0.0,
            maximum=1.0,
        ),
    )
    hypotheses = (
        Hypothesis(
            "majority-vote",
            "The model answers the common class (nearly) every time: accuracy settles at the "
            "common class's share and few or no rare examples are found, while the loss still "
            "improves.",
        ),
        Hypothesis(
            "every-token",
            "Letters get more likely to be right, so the loss falls steadily, but a sequence "
            "only counts when all of its letters are right, so exact match stays near zero.",
        ),
        Hypothesis(
            "aligned",
            "Loss and metric move together: as the loss falls the metric climbs well above what "
            "a constant answer gets.",
        ),
        Hypothesis(
            "not-learning",
            "Training is broken: the loss barely falls, or ends no lower than where the "
            "untrained model started and than a constant answer's, so the metric has nothing "
            "to follow.",
        ),
        Hypothesis(
            "inconclusive",
            "This run cannot tell, because a number sits too close to a line or the numbers "
            "fit no single story: the evaluation loss fell by 2-10% (slow learning, or none?); "
            "or accuracy beats the constant answer by more than the luck of drawing the "
            "evaluation examples gives (2 standard errors) but not clearly (under 3 standard "
            "errors, or under 2 points), between a majority vote and a metric that follows the "
            "loss; or accuracy does not beat the constant answer, yet the model is no majority "
            "vote: it names the rare class in over 5% of its answers, finds over 10% of the "
            "rare examples (paid for by false alarms), or falls clearly below the common "
            "class's share.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Loss: training batches and the evaluation set",
            ("loss", "eval_loss", "reference:*"),
            "cross-entropy (nats)",
            labels={"loss": "training batches", "eval_loss": "evaluation set", "reference:*": ""},
        ),
        Chart(
            "metric",
            "The metric on the evaluation set",
            ("metric:*",),
            "share",
            labels={"metric:*": ""},
        ),
    )
    # A reference is shown beside the runs it describes: a majority vote settles at the constant
    # answer's loss and accuracy; a model that learned ends near the best possible numbers.
    observations = (
        Observation(
            "final_loss",
            "Final training loss (mean of the last 10% of steps)",
            "constant_answer_loss",
            reference_for=("majority-vote", "not-learning"),
        ),
        Observation(
            "eval_loss",
            "Loss on the evaluation set",
            "best_loss",
            reference_for=("aligned", "majority-vote", "every-token", "inconclusive"),
        ),
        Observation(
            "accuracy",
            "Accuracy",
            "majority_share",
            reference_for=("majority-vote", "inconclusive"),
        ),
        Observation("accuracy_gain", "Accuracy gained over the constant answer (final model)"),
        Observation(
            "accuracy_gain_se", "... its standard error on this evaluation set (luck of the draw)"
        ),
        Observation(
            "minority_recall",
            "Recall of the rare class",
            "best_minority_recall",
            reference_for=("aligned", "majority-vote", "inconclusive"),
        ),
        Observation("predicted_minority_share", "Share of answers that name the rare class"),
        Observation("file_minority_share", "Share of rare rows in the training data file"),
        Observation(
            "loaded_minority_share",
            "Share of rare rows among those the loader gave training",
            "file_minority_share",
        ),
        Observation(
            "token_accuracy",
            "Letters right",
            "best_token_accuracy",
            reference_for=("aligned", "every-token"),
        ),
        Observation("exact_match", "Sequences entirely right", "expected_exact_match"),
        Observation("position_accuracy_low", "Letters right at the weakest position"),
        Observation("position_accuracy_high", "Letters right at the strongest position"),
        Observation("best_exact_match", "Exact match of the best possible model"),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        progress = loss_progress(signature)
        if progress == "none":
            return "not-learning"
        if progress == "some":
            return "inconclusive"
        gain, se = signature.get("accuracy_gain"), signature.get("accuracy_gain_se")
        if gain is not None and se is not None:
            if gain >= CLEAR_Z * se and gain >= CLEAR_GAIN:
                return "aligned"
            if gain > NOISE_Z * se:
                return "inconclusive"
            # Accuracy no better than always answering the common class (within the luck of
            # the draw): whatever the loss learned, the metric cannot see it. A majority vote
            # only if the model does answer that class, at that class's share.
            return "majority-vote" if votes_majority(signature) else "inconclusive"
        exact_match = signature.get("exact_match")
        if exact_match is not None:
            return "every-token" if exact_match < FLAT_BELOW else "aligned"
        return "not-learning"


def votes_majority(signature: Mapping[str, Any]) -> bool:
    """Whether the model answers the common class (nearly) every time, finds few or none of the
    rare examples, and so scores the common class's share, not clearly below it."""
    named, found = signature.get("predicted_minority_share"), signature.get("minority_recall")
    if (named or 0.0) > RARELY_NAMED or (found or 0.0) > FEW_FOUND:
        return False
    loss = -(signature.get("accuracy_gain") or 0.0)
    return not (loss >= CLEAR_Z * (signature.get("accuracy_gain_se") or 0.0) and loss >= CLEAR_GAIN)


def loss_progress(signature: Mapping[str, Any]) -> str:
    """How far the evaluation loss fell: "clear", "none" or "some" (too little to call).

    Read on the fixed evaluation set (one training batch is too noisy a start to compare
    with). On balanced classes the start is already near ln 2, so only the comparison with a
    constant answer sees the fall. The untrained model's first batch serves only as a guard: a
    first step that throws the loss far up (to 150 nats at a rate of 1) makes the fall back
    look like learning, though the model ends no better than it began.
    """
    initial, final = signature.get("initial_eval_loss"), signature.get("eval_loss")
    if initial is None or final is None:
        return "none"
    constant = signature.get("constant_answer_loss")
    untrained = signature.get("initial_loss")  # the first batch, before any step
    if (
        constant is not None
        and untrained is not None
        and initial > (1 + LEARNED_FALL) * untrained
        and final >= max(constant, untrained)
    ):
        # The first step threw the loss up (a rate of 0.1 or more does) and the run ends no
        # better than the untrained model, nor than a constant answer: the fall back from the
        # first step is no learning.
        return "none"
    fall = 1 - final / initial
    if fall >= LEARNED_FALL or (constant is not None and final < NO_BETTER_THAN * constant):
        return "clear"
    return "none" if fall < NO_FALL else "some"


DRILL = LossVsMetric()
