"""Loss vs metric: the loss a model is trained on and the number it is judged by can part ways.

Cross-entropy rewards every bit of probability moved towards the right answer; accuracy and
exact match only count answers that cross a line. On imbalanced classes the line is rarely
crossed for the minority; on sequences, one wrong token voids the whole answer.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.loss_vs_metric.signature import LossVsMetricSignature
from drills.core.contract import Chart, Drill, DrillOutcome, Hypothesis, Knob, Observation, Reporter

TASKS = ("imbalanced", "exact-match")

# Thresholds diagnose() reads the numbers with.
STILL_ABOVE = 0.9  # final loss above 90% of the first: training barely moved the loss
NO_BETTER_THAN = 0.95  # eval loss above 95% of a constant answer's: the inputs were not used
BEATS_CONSTANT_BY = 0.03  # accuracy this far above the majority share beats a constant answer
FLAT_BELOW = 0.05  # exact match under 5%: the metric has not moved off the floor


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
        "on features where the two overlap a lot; it is judged by accuracy. Exact match: a "
        "model rewrites 12 letters, each of which has a main answer (70% of the time) and an "
        "alternative; it is judged by whole-sequence exact match. Predict what the loss and "
        "the metric will do, then run it and read the confusion matrix or the per-sequence "
        "error counts."
    )
    version = "1"
    # The fixed side: balanced classes (minority_fraction=0.5), where accuracy follows the loss.
    healthy = "aligned"
    signature_type = LossVsMetricSignature
    knobs = (
        Knob(
            "task",
            "choice",
            "imbalanced",
            "imbalanced: a two-class classifier scored by accuracy and minority recall; "
            "exact-match: a 12-letter rewriting task scored by whole-sequence exact match.",
            choices=TASKS,
        ),
        Knob(
            "minority_fraction",
            "float",
            0.05,
            "Share of the rare class in the imbalanced task (0.5 is balanced). The exact-match "
            "task ignores it.",
            minimum=0.01,
            maximum=0.5,
            log_scale=True,
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
            "Each letter gets more likely to be right, so the loss falls steadily, but a "
            "sequence only counts when every letter is right, so exact match stays near zero.",
        ),
        Hypothesis(
            "aligned",
            "Loss and metric move together: as the loss falls the metric climbs well above what "
            "a constant answer gets.",
        ),
        Hypothesis(
            "not-learning",
            "Training is broken: the loss barely falls, so the metric has nothing to follow.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Loss: training batches and the evaluation set",
            ("loss", "eval_loss", "reference:*"),
            "cross-entropy (nats)",
        ),
        Chart("metric", "The metric on the evaluation set", ("metric:*",), "share"),
    )
    observations = (
        Observation(
            "final_loss",
            "Final training loss (mean of the last 10% of steps)",
            "constant_answer_loss",
        ),
        Observation("eval_loss", "Loss on the evaluation set", "best_loss"),
        Observation("accuracy", "Accuracy", "majority_share"),
        Observation("minority_recall", "Recall of the rare class", "best_minority_recall"),
        Observation("predicted_minority_share", "Share of answers that name the rare class"),
        Observation("token_accuracy", "Letters right", "best_token_accuracy"),
        Observation("exact_match", "Sequences entirely right", "expected_exact_match"),
        Observation("best_exact_match", "Exact match of the best possible model"),
    )

    def run(self, knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
        # Imported here so that describing the drill never pays for importing torch.
        from drills.catalog.loss_vs_metric.train import train

        return train(knobs, seed, report)

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        if not learned(signature):
            return "not-learning"
        accuracy = signature.get("accuracy")
        majority = signature.get("majority_share")
        if accuracy is not None and majority is not None:
            # Accuracy no better than always answering the common class: whatever the loss
            # learned, the metric cannot see it (the recall and confusion matrix show why).
            if accuracy <= majority + BEATS_CONSTANT_BY:
                return "majority-vote"
            return "aligned"
        exact_match = signature.get("exact_match")
        if exact_match is not None:
            return "every-token" if exact_match < FLAT_BELOW else "aligned"
        return "not-learning"


def learned(signature: Mapping[str, Any]) -> bool:
    """Whether the loss improved: well below its start, or below what a constant answer gets.

    On balanced classes the start is already near ln 2, so only the second test sees the fall.
    """
    initial, final = signature.get("initial_loss"), signature.get("final_loss")
    if initial is None or final is None:
        return False
    if final <= STILL_ABOVE * initial:
        return True
    eval_loss, constant = signature.get("eval_loss"), signature.get("constant_answer_loss")
    return eval_loss is not None and constant is not None and eval_loss < NO_BETTER_THAN * constant


DRILL = LossVsMetric()
