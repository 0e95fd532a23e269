"""Confusion matrices and per-class recall: what an overall accuracy averages away.

`confusion_matrix` counts with tensor methods only, so importing this module does not import
torch; `confusion_matrix_loop` is the plain reference the tests hold it to.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from drills.kit.tables import table

if TYPE_CHECKING:
    import torch

Matrix = list[list[int]]  # matrix[actual][predicted] = how many examples


def confusion_matrix(actual: torch.Tensor, predicted: torch.Tensor, classes: int) -> Matrix:
    """Counts of (actual, predicted) class pairs; rows are the true classes."""
    if actual.shape != predicted.shape:
        raise ValueError(
            f"shapes differ: actual {tuple(actual.shape)}, predicted {tuple(predicted.shape)}"
        )
    for ids in (actual, predicted):
        # Checked first: an out-of-range id would otherwise land silently in another cell.
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= classes):
            raise ValueError(f"class ids must lie in 0..{classes - 1}")
    pairs = actual.flatten() * classes + predicted.flatten()  # one bin per (actual, predicted)
    counts = pairs.bincount(minlength=classes * classes)
    matrix: Matrix = counts.view(classes, classes).tolist()
    return matrix


def confusion_matrix_loop(actual: Sequence[int], predicted: Sequence[int], classes: int) -> Matrix:
    matrix = [[0] * classes for _ in range(classes)]
    for truth, guess in zip(actual, predicted, strict=True):
        matrix[truth][guess] += 1
    return matrix


def per_class_recall(matrix: Matrix) -> list[float | None]:
    """For each true class, the share of its examples predicted as it; None for an empty class."""
    return [row[i] / sum(row) if sum(row) else None for i, row in enumerate(matrix)]


def accuracy(matrix: Matrix) -> float | None:
    total = sum(map(sum, matrix))
    return sum(matrix[i][i] for i in range(len(matrix))) / total if total else None


def confusion_table(
    matrix: Matrix, names: Sequence[str], *, note: str | None = None
) -> dict[str, Any]:
    """The matrix as a diagnostics table: one row per true class, with its recall."""
    recalls = per_class_recall(matrix)
    rows = [
        [f"actual {name}", *row, sum(row), recalls[i]]
        for i, (name, row) in enumerate(zip(names, matrix, strict=True))
    ]
    totals = [sum(row[j] for row in matrix) for j in range(len(names))]
    rows.append(["predicted in total", *totals, sum(totals), None])
    return table(
        "confusion_matrix",
        "Confusion matrix (rows: true class, columns: predicted class)",
        ("", *(f"predicted {name}" for name in names), "examples", "recall"),
        rows,
        note=note,
    )
