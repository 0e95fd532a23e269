"""Task "imbalanced": a binary classifier whose minority class overlaps the majority."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.loss_vs_metric.fit import entropy, fit
from drills.core.contract import DrillOutcome
from drills.kit.confusion import confusion_matrix, confusion_table, per_class_recall
from drills.kit.run import Run


@dataclass(frozen=True)
class ImbalancedConfig:
    minority_fraction: float
    features: int = 8
    separation: float = 1.0  # distance between the two class means, in noise standard deviations
    hidden: int = 32
    batch: int = 64
    eval_size: int = 2000
    lr: float = 1e-2  # Adam; the drill's `lr` knob (0 is allowed: nothing moves)
    steps: int = 200
    # "keeps-all": the loader yields every row of the data file; "drops-incomplete": it skips
    # rows with a field missing, and here the rare class's rows mostly miss one.
    loader: str = "keeps-all"


# The rare rows come from two sources, and the second one leaves a field empty: of every 19
# rare rows in the file, 18 miss it. Common rows are always complete.
INCOMPLETE_PER_COMPLETE_RARE = 18


def loaded_fraction(config: ImbalancedConfig) -> float:
    """The rare class's share among the rows the loader yields (the file's share under
    "keeps-all"). Worked in exact fractions, so that a file of equal classes loaded through
    "drops-incomplete" yields a share of exactly 0.05, the float a file of 5% rare rows holds,
    and both draw the very same rows."""
    if config.loader == "drops-incomplete":
        rare = Fraction(config.minority_fraction) / (1 + INCOMPLETE_PER_COMPLETE_RARE)
        return float(rare / (rare + 1 - Fraction(config.minority_fraction)))
    return config.minority_fraction


Batch = tuple[torch.Tensor, torch.Tensor]  # features, labels


# --- Imbalanced classes -------------------------------------------------------------------------


def train_imbalanced(config: ImbalancedConfig, run: Run) -> DrillOutcome:
    # One stream for all the data, drawn in this order: the direction, the evaluation set,
    # then every training batch (so batches would differ if the evaluation set grew).
    generator = run.data_rng
    fraction = loaded_fraction(config)
    # The rows the loader skips are drawn from a stream of their own, so that what it yields is
    # drawn exactly as a file without them would be.
    skipped = torch.Generator().manual_seed(run.seed)
    direction = torch.randn(config.features, generator=generator)
    direction /= direction.norm()

    def features_for(labels: torch.Tensor) -> torch.Tensor:
        # Class 1 (minority) is shifted along one direction; the noise is the same for both.
        noise = torch.randn(len(labels), config.features, generator=generator)
        return noise + config.separation * labels[:, None].float() * direction

    def file_rows(labels: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """The rows of the data file that hold these, and which of them are complete: under
        "drops-incomplete" each complete rare row is followed by the second source's
        incomplete ones (under "keeps-all" nothing reads the field, so it is not drawn)."""
        features = features_for(labels)
        if config.loader == "drops-incomplete":
            return with_incomplete_rows(features, labels)
        return features, labels, torch.ones(len(labels), dtype=torch.bool)

    def with_incomplete_rows(
        features: torch.Tensor, labels: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        spans = labels * INCOMPLETE_PER_COMPLETE_RARE + 1  # file rows per row drawn above
        complete = torch.zeros(int(spans.sum()), dtype=torch.bool)
        complete[spans.cumsum(0) - spans] = True
        file_features = torch.empty(len(complete), config.features)
        file_features[complete] = features
        incomplete = torch.randn(int((~complete).sum()), config.features, generator=skipped)
        file_features[~complete] = incomplete + config.separation * direction
        return file_features, labels.repeat_interleave(spans), complete

    def load(features: torch.Tensor, labels: torch.Tensor, complete: torch.Tensor) -> Batch:
        if config.loader == "drops-incomplete":
            return features[complete], labels[complete]  # the bug: rows with a gap are skipped
        return features, labels

    # Rows and rare rows of the file training reads, and of what its loader yields.
    counts = {"file": [0, 0], "loaded": [0, 0]}

    def next_batch() -> Batch:
        rows = file_rows((torch.rand(config.batch, generator=generator) < fraction).long())
        batch = load(*rows)
        for key, labels in (("file", rows[1]), ("loaded", batch[1])):
            counts[key][0] += len(labels)
            counts[key][1] += int(labels.sum())
        return batch

    # A fixed evaluation set whose loaded rows hold exactly the loaded class mix (read through
    # the same loader as training: under "drops-incomplete" its file holds the file's mix).
    minority = max(1, round(fraction * config.eval_size))
    eval_labels = torch.zeros(config.eval_size, dtype=torch.int64)
    eval_labels[:minority] = 1
    eval_file = file_rows(eval_labels)
    eval_features, eval_labels = load(*eval_file)
    majority_share = 1 - minority / config.eval_size
    is_minority = eval_labels == 1

    # The best any classifier could do: the true posterior, which we know for synthetic data.
    log_prior_odds = math.log(fraction / (1 - fraction))
    true_log_odds = (
        log_prior_odds + config.separation * (eval_features @ direction) - config.separation**2 / 2
    )
    best_loss = float(F.binary_cross_entropy_with_logits(true_log_odds, eval_labels.float()))
    best_predicted = (true_log_odds > 0).long()
    constant_answer_loss = entropy([fraction, 1 - fraction])  # always answer the class mix

    model = nn.Sequential(
        nn.Linear(config.features, config.hidden), nn.ReLU(), nn.Linear(config.hidden, 2)
    )

    def evaluate() -> dict[str, float]:
        logits = model(eval_features)
        predicted = logits.argmax(dim=1)
        return {
            "eval_loss": float(F.cross_entropy(logits, eval_labels)),
            "metric:accuracy": float((predicted == eval_labels).float().mean()),
            "metric:minority recall": float((predicted[is_minority] == 1).float().mean()),
            "metric:majority share": majority_share,  # flat reference lines from here on
            "reference:constant answer": constant_answer_loss,
            "reference:best possible": best_loss,
        }

    signature = fit(run, model, config, next_batch, F.cross_entropy, evaluate)

    with torch.no_grad():
        predicted = model(eval_features).argmax(dim=1)
    matrix = confusion_matrix(eval_labels, predicted, 2)
    best_matrix = confusion_matrix(eval_labels, best_predicted, 2)

    signature.constant_answer_loss = constant_answer_loss
    signature.best_loss = best_loss
    signature.accuracy = run.tail_mean("metric:accuracy")
    signature.majority_share = majority_share
    signature.minority_recall = run.tail_mean("metric:minority recall")
    signature.predicted_minority_share = float((predicted == 1).float().mean())
    # Against the constant answer, each rare example found gains one, each false alarm loses
    # one: the gain and its standard error on this evaluation set (which says whether the gain
    # is more than the luck of which examples were drawn).
    found = int((predicted[is_minority] == 1).sum())
    false_alarms = int((predicted[~is_minority] == 1).sum())
    signature.accuracy_gain = (found - false_alarms) / config.eval_size
    signature.accuracy_gain_se = math.sqrt(found + false_alarms) / config.eval_size
    signature.best_minority_recall = per_class_recall(best_matrix)[1]
    # Counted on the rows themselves, not taken from the settings.
    signature.file_minority_share = counts["file"][1] / counts["file"][0]
    signature.loaded_minority_share = counts["loaded"][1] / counts["loaded"][0]
    names = ("majority (0)", "minority (1)")
    tables = [
        confusion_table(
            matrix,
            names,
            note=f"The trained model on the {config.eval_size} evaluation examples.",
        ),
        {
            **confusion_table(
                best_matrix,
                names,
                note="The true posterior of this synthetic data, thresholded at 0.5: the best "
                "accuracy any classifier can reach here.",
            ),
            "key": "best_confusion_matrix",
            "title": "Confusion matrix of the best possible classifier",
        },
    ]
    inputs = {
        "shapes": {"features": [config.batch, config.features], "eval": [config.eval_size]},
        "minority_fraction": config.minority_fraction,
        "loader": config.loader,
        "eval_class_counts": [config.eval_size - minority, minority],
        "eval_file_class_counts": [
            int((eval_file[1] == 0).sum()),
            int((eval_file[1] == 1).sum()),
        ],
        "separation": config.separation,
        "examples": [
            {
                "features_first4": [round(v, 3) for v in eval_features[i, :4].tolist()],
                "label": int(eval_labels[i]),
            }
            for i in (0, minority)
        ],
    }
    return run.outcome(signature, inputs=inputs, tables=tables)
