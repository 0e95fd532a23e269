"""Tasks "exact-match" and "exact-match-clean": letters rewritten one by one, scored by whole
sequences."""

from __future__ import annotations

import math
import string
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.loss_vs_metric.fit import entropy, fit
from drills.core.contract import DrillOutcome
from drills.kit.run import Run
from drills.kit.tables import Cell, table


@dataclass(frozen=True)
class ExactMatchConfig:
    symbols: int = 16  # letters A…P, in the input and the answer
    length: int = 12  # letters per sequence; exact match needs all of them right
    main_share: float = 0.7  # how often a letter is rewritten to its main answer (1: always)
    # Letters of the input that reach the model, from the left; the rest arrive blank (all
    # zeros), as when an encoder cuts its input short. The answers still have all 12.
    input_length: int = 12
    hidden: int = 128
    batch: int = 32
    eval_size: int = 512
    lr: float = 1e-2  # Adam; the drill's `lr` knob
    steps: int = 200


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
        one_hot = F.one_hot(letters, symbols).float()
        one_hot[:, config.input_length :] = 0.0  # the letters cut off never reach the model
        return one_hot.flatten(1)

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
    # Letters right at each position: alike everywhere when every letter is as hard as the
    # next; at chance from some position on when those letters never reached the model.
    by_position = (predicted == eval_answers).float().mean(dim=0).tolist()
    signature.position_accuracy_low = min(by_position)
    signature.position_accuracy_high = max(by_position)
    tables = [
        wrong_letters_table(predicted, eval_answers),
        examples_table(eval_letters, eval_answers, predicted),
        position_table(by_position),
    ]
    inputs = {
        "shapes": {"letters": [config.batch, length], "eval": [config.eval_size, length]},
        "main_answer": {letter(x): letter(y) for x, y in enumerate(main.tolist())},
        "alternative_answer": {letter(x): letter(y) for x, y in enumerate(alternative.tolist())},
        "main_share": config.main_share,
        "letters_reaching_the_model": config.input_length,
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


def position_table(by_position: list[float]) -> dict[str, Any]:
    return table(
        "position_accuracy",
        "Letters right at each position (evaluation set, after training)",
        ("position", "share right"),
        [[index + 1, share] for index, share in enumerate(by_position)],
        note="A model that guesses gets 1 letter in 16 right.",
    )
