import subprocess
import sys
from pathlib import Path

import pytest
import torch

from drills.kit.confusion import (
    accuracy,
    confusion_matrix,
    confusion_matrix_loop,
    confusion_table,
    per_class_recall,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("classes", [2, 3, 5])
@pytest.mark.parametrize("seed", range(3))
def test_vectorised_counts_match_the_loop(classes: int, seed: int) -> None:
    generator = torch.Generator().manual_seed(seed)
    actual = torch.randint(classes, (257,), generator=generator)
    predicted = torch.randint(classes, (257,), generator=generator)
    expected = confusion_matrix_loop(actual.tolist(), predicted.tolist(), classes)
    assert confusion_matrix(actual, predicted, classes) == expected
    assert sum(map(sum, expected)) == 257


def test_counts_any_shape_and_keeps_rows_as_true_classes() -> None:
    actual = torch.tensor([[0, 0], [1, 1]])
    predicted = torch.tensor([[0, 1], [0, 0]])
    assert confusion_matrix(actual, predicted, 2) == [[1, 1], [2, 0]]


def test_recall_and_accuracy() -> None:
    matrix = [[90, 0, 0], [9, 1, 0], [0, 0, 0]]
    assert per_class_recall(matrix) == [1.0, 0.1, None]  # no examples: no recall
    assert accuracy(matrix) == pytest.approx(0.91)
    assert accuracy([[0, 0], [0, 0]]) is None


def test_bad_inputs_are_refused() -> None:
    with pytest.raises(ValueError, match="shapes differ"):
        confusion_matrix(torch.tensor([0, 1]), torch.tensor([0]), 2)
    for actual, predicted in (([0, 2], [0, 1]), ([0, 1], [0, 2]), ([0, -1], [0, 1])):
        with pytest.raises(ValueError, match="0..1"):
            confusion_matrix(torch.tensor(actual), torch.tensor(predicted), 2)
    with pytest.raises(ValueError):
        confusion_matrix_loop([0, 1], [0], 2)


def test_table_rows_carry_totals_and_recall() -> None:
    rendered = confusion_table([[95, 0], [5, 0]], ("majority", "minority"), note="n")
    assert rendered["columns"] == [
        "",
        "predicted majority",
        "predicted minority",
        "examples",
        "recall",
    ]
    assert rendered["rows"] == [
        ["actual majority", 95, 0, 95, 1.0],
        ["actual minority", 5, 0, 5, 0.0],
        ["predicted in total", 100, 0, 100, None],
    ]
    assert rendered["note"] == "n"


def test_importing_it_does_not_import_torch() -> None:
    code = "import sys, drills.kit.confusion; print('torch' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == "False"
