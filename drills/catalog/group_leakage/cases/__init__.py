"""Cases on the group-leakage drill: reviews split into training and validation, scored by an MLP
that can learn each writer's habit. Users on both sides of a random split, near copies posted
under new accounts, and an honest split of an easy problem all show a training loss near zero
and a validation loss around half the loss of predicting the mean. An exact-duplicate search
passes all three. The user audit, a distance audit, the score of users nowhere in the split, or
a rerun with whole users on one side tell them apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.group_leakage import DRILL, LEAKS, OPTIMISM_Z


def flagged(count_key: str) -> Any:
    """A reading of one audit: whether it flags any validation row."""

    def reading(signature: Mapping[str, Any], error: str | None) -> str:
        count = signature.get(count_key)
        if count is None:
            return "no-audit"
        return "flags-rows" if count > 0 else "flags-nothing"

    reading.__name__ = f"flagged_{count_key}"
    return reading


def against_unseen_users(signature: Mapping[str, Any], error: str | None) -> str:
    """Whether validation looks better than users nowhere in the split, beyond chance."""
    optimism, noise = signature.get("val_optimism"), signature.get("optimism_noise")
    if optimism is None or noise is None:
        return "no-score"
    return "validation-better" if optimism > OPTIMISM_Z * noise else "within-chance"


def what_the_split_lets_through(signature: Mapping[str, Any], error: str | None) -> str:
    """The drill's own reading, in neutral words: nothing crosses the split (no audit flags a
    row), a leak validation shows, or rows flagged that the scores cannot show."""
    verdict = DRILL.diagnose(signature, error)
    if verdict == "honest":
        return "nothing-crosses"
    return "still-leaks" if verdict in LEAKS else "cannot-tell"


CASE_SET = CaseSet(
    drill="group-leakage",
    causes=(
        Cause(
            "users-on-both-sides",
            "data",
            "Reviews were split at random although each user wrote several: most validation "
            "users also have reviews in training, and the model learnt their habit.",
            {"split": "random-rows", "rows_per_user": 2, "user_share": 0.4},
            "user-leakage",
            fix="split-by-user",
            exercise="group-leakage-honest-split",
        ),
        Cause(
            "near-copies-across",
            "data",
            "Some validation reviews are training reviews posted again under another account, "
            "their text barely changed: the model has learnt those very rows.",
            {
                "split": "by-user",
                "rows_per_user": 1,
                "near_copies": 0.5,
                "dedupe": "none",
                "user_share": 0.45,
            },
            "near-copy-leakage",
            fix="drop-near-copies",
            exercise="group-leakage-honest-split",
        ),
        Cause(
            "honest-easy-problem",
            "healthy",
            "Nothing leaks: every user wrote one review, so a random split keeps them apart, "
            "and the problem is simply easy: little of a score is the writer's own habit.",
            {"split": "random-rows", "rows_per_user": 1, "user_share": 0.22},
            "honest",
            fix="change-nothing",
        ),
    ),
    experiments=(
        Experiment(
            "exact-duplicate-search",
            "Search for exact duplicates",
            "Count the validation rows whose features occur, bit for bit, in training.",
            shows=("numbers",),
            observations=("exact_matches", "val_rows"),
            reading=flagged("exact_matches"),
        ),
        Experiment(
            "user-audit",
            "Audit the split by user",
            "Count the validation rows whose writer also has reviews in training.",
            shows=("numbers",),
            observations=("shared_user_rows", "user_share_found", "val_rows"),
            reading=flagged("shared_user_rows"),
        ),
        Experiment(
            "near-copy-audit",
            "Audit the split by distance",
            "Count the validation rows that have a training row closer than 0.2 (features "
            "rounded away: what normalising the text would catch).",
            shows=("numbers",),
            observations=("near_copies_found", "copy_share_found", "val_rows"),
            reading=flagged("near_copies_found"),
        ),
        Experiment(
            "score-unseen-users",
            "Score users nowhere in the split",
            "Score the trained model on 1,024 reviews by users who wrote nothing in training or "
            "validation, and set it beside the validation loss.",
            shows=("numbers",),
            observations=("final_val_loss", "unseen_loss", "val_optimism", "optimism_noise"),
            reading=against_unseen_users,
        ),
        Experiment(
            "resplit-by-user",
            "Split again with whole users on one side",
            "Redo the split so that all the reviews of a user go to the same side, train again, "
            "and score against users nowhere in the split.",
            change=Change(set={"split": "by-user"}),
            shows=("numbers",),
            observations=(
                "final_val_loss",
                "unseen_loss",
                "val_optimism",
                "optimism_noise",
                "shared_user_rows",
                "near_copies_found",
            ),
            # Read by what still crosses the split: an honest split's validation differs from
            # the users never seen by more than 2 standard errors about one run in twenty.
            reading=what_the_split_lets_through,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the validation score is honest.", Change()),
        Fix(
            "split-by-user",
            "Split by user: all the reviews of a user on the same side.",
            Change(set={"split": "by-user"}),
        ),
        Fix(
            "drop-near-copies",
            "Drop the validation rows that have a training row within 0.2.",
            Change(set={"dedupe": "near"}),
        ),
        Fix(
            "drop-exact-duplicates",
            "Drop the validation rows found exactly in training.",
            Change(set={"dedupe": "exact"}),
        ),
    ),
    charts=(
        ShownChart(
            "Loss on training and validation",
            "mean squared error (target variance 1)",
            {"train": "training", "val": "validation"},
        ),
    ),
    base={"user_share": 0.4},
    symptom_observations=("final_val_loss",),
)

CASES = (
    Case(
        "a-score-too-good-to-be-true",
        "A score too good to be true",
        "A model that predicts review scores from text features explains roughly half of the "
        "variance on validation, far more than the team's earlier attempts, and its training "
        "loss is near zero. Before the number goes into a report, they want to know whether it "
        "will hold on next month's reviews.",
        CASE_SET,
        causes=("users-on-both-sides", "near-copies-across", "honest-easy-problem"),
    ),
    Case(
        "a-split-that-passed-the-duplicate-check",
        "A split that passed the duplicate check",
        "Before trusting a validation loss around half the loss of predicting the mean, a "
        "colleague searched training and validation for duplicate rows and found none. The "
        "model's training loss is near zero. Is the validation score a fair estimate of how it "
        "will do on the reviews it meets after release?",
        CASE_SET,
        causes=("users-on-both-sides", "near-copies-across"),
    ),
)
