"""The training loops of "Loss vs metric": two tasks where the loss and the metric part ways.

- imbalanced: a binary classifier; the minority class overlaps the majority, so even the best
  possible classifier calls almost every example "majority". Accuracy sits at the majority
  share, minority recall near 0, while the cross-entropy keeps improving.
- exact-match: 12 letters to rewrite, each with a main answer (70%) and an alternative (30%).
  The token loss falls steadily and token accuracy climbs, but a sequence only counts when all
  12 letters match, and 0.7 ** 12 ≈ 1.4% is the best any model can do.

Kept apart from the drill's description (__init__.py) so that only a worker process that
actually trains imports torch.
"""

from __future__ import annotations

from typing import Any

from drills.catalog.loss_vs_metric.exact_match import ExactMatchConfig, train_exact_match
from drills.catalog.loss_vs_metric.imbalanced import ImbalancedConfig, train_imbalanced
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train on the chosen task; see LossVsMetric."""
    run = Run(seed, report)
    if knobs["task"] == "imbalanced":
        imbalanced = ImbalancedConfig(
            knobs["minority_fraction"],
            separation=knobs["separation"],
            lr=knobs["lr"],
            loader=knobs["loader"],
        )
        return train_imbalanced(imbalanced, run)
    # exact-match-clean: every letter has one answer, so a model can get whole sequences right.
    main_share = 1.0 if knobs["task"] == "exact-match-clean" else ExactMatchConfig.main_share
    config = ExactMatchConfig(
        main_share=main_share, input_length=knobs["input_length"], lr=knobs["lr"]
    )
    return train_exact_match(config, run)
