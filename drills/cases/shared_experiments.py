"""Experiments that more than one case set offers word for word: one definition each, so the
same check reads the same on every case page (drills whose signatures count the same thing)."""

from __future__ import annotations

from drills.cases.contract import Experiment
from drills.cases.readings import shared_examples

# Drills that count `duplicates_found` (validation examples found verbatim in training) and
# `val_examples`: overfitting-leakage and val-below-train.
SEARCH_SHARED_EXAMPLES = Experiment(
    "search-shared-examples",
    "Search validation examples in the training set",
    "For every validation example, look for an exact copy among the training examples.",
    shows=("numbers",),
    observations=("duplicates_found", "val_examples"),
    reading=shared_examples,
)
