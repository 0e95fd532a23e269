"""What a run of "Loss vs metric" reports (torch-free, so the description can name it)."""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class LossVsMetricSignature(Signature):
    # Training itself, for both tasks.
    steps_run: int | None = None
    initial_loss: float | None = None
    final_loss: float | None = None  # training batches, mean of the last 10% of steps
    eval_loss: float | None = None  # the fixed evaluation set, mean of the last 10% of steps
    initial_eval_loss: float | None = None  # the evaluation set after the first step
    constant_answer_loss: float | None = None  # always answering the class mix
    best_loss: float | None = None  # the true posterior's loss: the best any model can do
    # The imbalanced task (None in the exact-match task).
    accuracy: float | None = None
    majority_share: float | None = None  # accuracy of always answering the common class
    minority_recall: float | None = None
    predicted_minority_share: float | None = None  # share of answers naming the rare class
    # Accuracy of the final model minus the majority share: (rare found - false alarms) / N...
    accuracy_gain: float | None = None
    accuracy_gain_se: float | None = None  # ... and its standard error, sqrt(found + alarms) / N
    best_minority_recall: float | None = None  # of the best possible classifier
    # The rare class's share among the training rows of the data file, and among those the
    # loader yielded (they differ only when the loader skips rows).
    file_minority_share: float | None = None
    loaded_minority_share: float | None = None
    # The exact-match task (None in the imbalanced task).
    token_accuracy: float | None = None
    exact_match: float | None = None
    expected_exact_match: float | None = None  # token_accuracy ** sequence_length
    best_token_accuracy: float | None = None  # the main answer's share
    best_exact_match: float | None = None  # best_token_accuracy ** sequence_length
    sequence_length: int | None = None
    # Letters right at the weakest and at the strongest of the 12 positions (final model).
    position_accuracy_low: float | None = None
    position_accuracy_high: float | None = None
    # Health of the run.
    weight_change: float | None = None  # ||final - initial|| / ||initial||
    nonfinite_step: int | None = None
