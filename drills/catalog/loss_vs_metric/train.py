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

import math
import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.loss_vs_metric.signature import LossVsMetricSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.audit import relative_weight_change
from drills.kit.confusion import confusion_matrix, confusion_table, per_class_recall
from drills.kit.run import Run
from drills.kit.tables import Cell, table


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


@dataclass(frozen=True)
class ExactMatchConfig:
    symbols: int = 16  # letters A…P, in the input and the answer
    length: int = 12  # letters per sequence; exact match needs all of them right
    main_share: float = 0.7  # how often a letter is rewritten to its main answer (1: always)
    hidden: int = 128
    batch: int = 32
    eval_size: int = 512
    lr: float = 1e-2  # Adam; the drill's `lr` knob
    steps: int = 200


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train on the chosen task; see LossVsMetric."""
    run = Run(seed, report)
    if knobs["task"] == "imbalanced":
        return train_imbalanced(ImbalancedConfig(knobs["minority_fraction"], lr=knobs["lr"]), run)
    # exact-match-clean: every letter has one answer, so a model can get whole sequences right.
    main_share = 1.0 if knobs["task"] == "exact-match-clean" else ExactMatchConfig.main_share
    return train_exact_match(ExactMatchConfig(main_share=main_share, lr=knobs["lr"]), run)


def fit(
    run: Run,
    model: nn.Module,
    config: ImbalancedConfig | ExactMatchConfig,
    next_batch: Callable[[], tuple[torch.Tensor, torch.Tensor]],
    loss_of: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    evaluate: Callable[[], dict[str, float]],
) -> LossVsMetricSignature:
    """The plain loop both tasks share: a fresh batch per step, then the metrics on a fixed set.

    Returns the signature with the numbers about training filled in; each task adds its own.
    """
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    for step in range(config.steps):
        inputs, targets = next_batch()
        loss = loss_of(model(inputs), targets)
        if run.stop_if_nonfinite(step, loss.item()):
            break  # stop rather than plot NaN
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        optimizer.step()
        run.log("loss", step, loss.item())
        with torch.no_grad():
            for name, value in evaluate().items():
                run.log(name, step, value)
    return LossVsMetricSignature(
        steps_run=len(run.values("loss")),
        initial_loss=run.first("loss"),
        final_loss=run.tail_mean("loss"),
        initial_eval_loss=run.first("eval_loss"),
        eval_loss=run.tail_mean("eval_loss"),
        weight_change=relative_weight_change(run.parameter_rows()),
        nonfinite_step=run.nonfinite_step,
    )


def entropy(probabilities: list[float]) -> float:
    return -sum(p * math.log(p) for p in probabilities if p > 0)


# --- Imbalanced classes -------------------------------------------------------------------------


def train_imbalanced(config: ImbalancedConfig, run: Run) -> DrillOutcome:
    # One stream for all the data, drawn in this order: the direction, the evaluation set,
    # then every training batch (so batches would differ if the evaluation set grew).
    generator = run.data_rng
    fraction = config.minority_fraction
    direction = torch.randn(config.features, generator=generator)
    direction /= direction.norm()

    def features_for(labels: torch.Tensor) -> torch.Tensor:
        # Class 1 (minority) is shifted along one direction; the noise is the same for both.
        noise = torch.randn(len(labels), config.features, generator=generator)
        return noise + config.separation * labels[:, None].float() * direction

    def next_batch() -> tuple[torch.Tensor, torch.Tensor]:
        labels = (torch.rand(config.batch, generator=generator) < fraction).long()
        return features_for(labels), labels

    # A fixed evaluation set with exactly the intended class mix.
    minority = max(1, round(fraction * config.eval_size))
    eval_labels = torch.zeros(config.eval_size, dtype=torch.int64)
    eval_labels[:minority] = 1
    eval_features = features_for(eval_labels)
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
        "minority_fraction": fraction,
        "eval_class_counts": [config.eval_size - minority, minority],
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


# --- Exact match --------------------------------------------------------------------------------


def train_exact_match(config: ExactMatchConfig, run: Run) -> DrillOutcome:
    # One stream for all the data: the answer key, the evaluation set, then every batch.
    generator = run.data_rng
    symbols, length = config.symbols, config.length
    main = torch.randperm(symbols, generator=generator)
    alternative = main.roll(-1)  # alternative[x] = main[x + 1]: always a different letter

    def sample(count: int) -> tuple[torch.Tensor, torch.Tensor]:
        letters = torch.randint(symbols, (count, length), generator=generator)
        use_main = torch.rand(count, length, generator=generator) < config.main_share
        return letters, torch.where(use_main, main[letters], alternative[letters])

    def encode(letters: torch.Tensor) -> torch.Tensor:
        return F.one_hot(letters, symbols).float().flatten(1)

    def next_batch() -> tuple[torch.Tensor, torch.Tensor]:
        letters, answers = sample(config.batch)
        return encode(letters), answers

    def sequence_loss(logits: torch.Tensor, answers: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(logits.view(-1, symbols), answers.flatten())

    eval_letters, eval_answers = sample(config.eval_size)
    eval_inputs = encode(eval_letters)
    model = nn.Sequential(
        nn.Linear(length * symbols, config.hidden),
        nn.ReLU(),
        nn.Linear(config.hidden, length * symbols),
    )

    def predictions() -> tuple[torch.Tensor, torch.Tensor]:
        logits = model(eval_inputs).view(-1, length, symbols)
        return logits, logits.argmax(dim=-1)

    def evaluate() -> dict[str, float]:
        logits, predicted = predictions()
        correct = predicted == eval_answers
        token_accuracy = float(correct.float().mean())
        return {
            "eval_loss": float(sequence_loss(logits, eval_answers)),
            "metric:token accuracy": token_accuracy,
            "metric:exact match": float(correct.all(dim=1).float().mean()),
            # What exact match would be if every letter were right independently.
            f"metric:token accuracy^{length}": token_accuracy**length,
            "reference:constant answer": math.log(symbols),
            "reference:best possible": entropy([config.main_share, 1 - config.main_share]),
        }

    signature = fit(run, model, config, next_batch, sequence_loss, evaluate)

    token_accuracy = run.tail_mean("metric:token accuracy")
    # Answers are uniform over the letters (main is a permutation), so a constant answer can do
    # no better than ln(symbols).
    signature.constant_answer_loss = math.log(symbols)
    signature.best_loss = entropy([config.main_share, 1 - config.main_share])
    signature.token_accuracy = token_accuracy
    signature.exact_match = run.tail_mean("metric:exact match")
    signature.expected_exact_match = None if token_accuracy is None else token_accuracy**length
    signature.best_token_accuracy = config.main_share
    signature.best_exact_match = config.main_share**length
    signature.sequence_length = length
    with torch.no_grad():
        _, predicted = predictions()
    tables = [
        wrong_letters_table(predicted, eval_answers),
        examples_table(eval_letters, eval_answers, predicted),
    ]
    inputs = {
        "shapes": {"letters": [config.batch, length], "eval": [config.eval_size, length]},
        "main_answer": {letter(x): letter(y) for x, y in enumerate(main.tolist())},
        "alternative_answer": {letter(x): letter(y) for x, y in enumerate(alternative.tolist())},
        "main_share": config.main_share,
    }
    return run.outcome(signature, inputs=inputs, tables=tables)


def letter(index: int) -> str:
    return string.ascii_uppercase[index]


def spell(letters: list[int]) -> str:
    return "".join(letter(i) for i in letters)


def wrong_letters_table(predicted: torch.Tensor, answers: torch.Tensor) -> dict[str, Any]:
    """How many sequences have 0, 1, 2… wrong letters: exact match only counts the first row."""
    wrong = (predicted != answers).sum(dim=1)
    counts = wrong.bincount(minlength=answers.shape[1] + 1).tolist()
    total = len(wrong)
    rows = [[k, n, n / total] for k, n in enumerate(counts) if n or k == 0]
    return table(
        "wrong_letters",
        "Wrong letters per sequence (evaluation set, after training)",
        ("wrong letters", "sequences", "share"),
        rows,
        note="Exact match is the share in the first row; the loss rewards every row below it.",
    )


def examples_table(
    letters: torch.Tensor, answers: torch.Tensor, predicted: torch.Tensor
) -> dict[str, Any]:
    rows: list[list[Cell]] = []
    for i in range(3):
        wrong = (predicted[i] != answers[i]).tolist()
        marks = "".join("x" if w else "." for w in wrong)  # x under each wrong letter
        rows.append(
            [
                spell(letters[i].tolist()),
                spell(answers[i].tolist()),
                spell(predicted[i].tolist()),
                marks,
                not any(wrong),
            ]
        )
    return table(
        "examples",
        "Evaluation examples: input, reference answer, prediction",
        ("input", "reference", "prediction", "wrong", "exact match"),
        rows,
    )
