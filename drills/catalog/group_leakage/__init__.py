"""Group and near-copy leakage: a split that an exact-match audit passes, and still leaks.

Reviews come from users, and each user rates a little above or below the general rule in a way
only their own reviews reveal. Split the reviews at random and nearly every validation user
also has reviews in training: the model has learnt their offset, so validation scores them as
known users, where the users the model will meet later are new. Reviews posted again under a
second account with the text barely changed (near copies) leak even more: the model has learnt
the very row. No feature row occurs twice, so an exact-match audit finds nothing; an audit by
user, or by distance to the nearest training row, finds it. Validation then looks better than
users never seen by about the flagged share of the gap between unknown and known rows. A split
by user closes the first leak, not the second: only dropping the near copies does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.group_leakage.signature import GroupLeakageSignature
from drills.core.contract import (
    Chart,
    Drill,
    Hypothesis,
    Knob,
    NumericPrediction,
    Observation,
    Reference,
)

SPLITS = ("random-rows", "by-user")
DEDUPES = ("none", "exact", "near")

# Thresholds diagnose() reads the numbers with, as in "Overfitting and leakage": validation must
# look better than the users never seen by more than two honest samples differ by chance (2
# standard errors, counting one user's rows as one draw), and each leak named must be able to
# account for at least one standard error of it (its flagged share times its gap).
OPTIMISM_Z = 2.0
EXPECTED_Z = 1.0
# A number within this share of its line is on the line, and the verdict says inconclusive:
# with no user effect at all (user_share 0, seed 4) the users' share of the optimism came to
# 1.005 standard errors on one machine's kernels and 0.80 on another's.
ON_THE_LINE = 0.05
LEAKS = ("user-leakage", "near-copy-leakage", "both-leak")


class GroupLeakage(Drill):
    slug = "group-leakage"
    position = 92
    title = "Group and near-copy leakage"
    summary = (
        "A random split lets the same user, or a barely changed copy, sit on both sides: the "
        "exact-match audit passes and validation flatters."
    )
    symptom = (
        "Validation says the model explains most of the variance of review scores; on the "
        "next month's new customers it does far worse. A search for duplicate rows found none."
    )
    scenario = (
        "An MLP predicts a review's score from 20 features of its text: 4 about the content, "
        "16 that reflect the writer's style. 1,024 reviews are split 768 / 256 into training "
        "and validation; 1,024 reviews by other users, who are nowhere in the split, give the "
        "honest score. Choose how the split is made, how many reviews each user wrote, how many "
        "validation rows are near copies of training rows, and how much of the score is the "
        "user's own habit; predict what validation shows and which audit finds the overlap."
    )
    version = "1"
    healthy = "honest"
    signature_type = GroupLeakageSignature
    knobs = (
        Knob(
            "split",
            "choice",
            "random-rows",
            "random-rows: each review goes to a side at random, whoever wrote it; by-user: all "
            "the reviews of a user go to the same side.",
            choices=SPLITS,
        ),
        Knob(
            "rows_per_user",
            "int",
            4,
            "Reviews each user wrote (1,024 / this many users in the split).",
            choices=(1, 2, 4, 8),
        ),
        Knob(
            "near_copies",
            "float",
            0.0,
            "Share of the validation rows that are near copies of training reviews, posted "
            "again under another account with the text barely changed.",
            choices=(0.0, 0.25, 0.5),
        ),
        Knob(
            "perturbation",
            "float",
            1e-3,
            "How far each feature of a near copy is moved (standard deviation): a change of "
            "case or whitespace in the text.",
            minimum=1e-4,
            maximum=0.02,
            log_scale=True,
        ),
        Knob(
            "user_share",
            "float",
            0.4,
            "Share of the score's variance that is the user's own habit (each user rates above "
            "or below the rule by the same amount); the rest is the content rule and 6% noise.",
            minimum=0.0,
            maximum=0.6,
        ),
        Knob(
            "dedupe",
            "choice",
            "none",
            "Before training, drop the validation rows an audit flags: none; exact (features "
            "found bit for bit in training); near (a training row closer than 0.2).",
            choices=DEDUPES,
        ),
    )
    hypotheses = (
        Hypothesis(
            "honest",
            "Nothing crosses the split: no validation user also wrote training reviews and no "
            "validation row has a near copy in training. Validation is a fair sample of new "
            "users and scores like the users never seen, up to chance.",
        ),
        Hypothesis(
            "user-leakage",
            "Users cross the split: most validation rows were written by users who also have "
            "reviews in training, whose habit the model learnt. No row occurs twice, so the "
            "exact-match audit finds nothing; the user audit flags them. Validation looks "
            "better than the users never seen by about the flagged share of the gap between a "
            "new user's review and a known user's.",
        ),
        Hypothesis(
            "near-copy-leakage",
            "Near copies cross the split: validation rows that are training reviews posted again "
            "under another account, their features barely moved. The exact-match audit and the "
            "user audit pass; a distance audit flags them. Validation looks better than the "
            "users never seen by about the copied share of the gap between new users and "
            "training rows.",
        ),
        Hypothesis(
            "both-leak",
            "Both leaks at once: validation users who also wrote training reviews, and near "
            "copies of training reviews, each flagged share large enough to matter. Validation "
            "looks better than the users never seen by about the sum of the two.",
        ),
        Hypothesis(
            "inconclusive",
            "An audit flags validation rows, but the scores cannot show a leak: validation looks "
            "no better than the users never seen by more than chance (2 standard errors), or "
            "what the flagged rows could add is under 1 standard error (too few, or too little "
            "of each user's habit to learn).",
        ),
    )
    charts = (
        Chart(
            "losses",
            "Loss on training, validation, and users never seen",
            ("train", "val", "unseen"),
            "mean squared error (target variance 1)",
            references=(
                Reference("best possible on new users", "unseen_floor"),
                Reference("best possible on known users", "known_floor"),
            ),
            labels={"train": "training", "val": "validation", "unseen": "users never seen"},
        ),
    )
    observations = (
        Observation("exact_matches", "Validation rows found exactly in training"),
        Observation("shared_user_rows", "Validation rows whose user has training rows"),
        Observation("near_copies_found", "Validation rows with a training row within 0.2"),
        Observation("shared_share", "Share of validation rows either audit flags"),
        Observation("final_train_loss", "Training loss at the end"),
        Observation("final_val_loss", "Validation loss at the end", "unseen_loss"),
        Observation("unseen_loss", "Loss on users never seen", "unseen_floor"),
        Observation("known_user_loss", "Loss on new reviews of users in training", "known_floor"),
        Observation("flagged_val_loss", "Validation loss of the flagged rows"),
        Observation("unflagged_val_loss", "Validation loss of the other rows", "unseen_loss"),
        Observation(
            "val_optimism",
            "How much better validation looks than users never seen",
            "expected_optimism",
            reference_for=LEAKS,
        ),
        Observation("optimism_noise", "How much two honest samples differ by chance (1 s.e.)"),
        Observation("removed_by_dedupe", "Validation rows deduplication dropped"),
    )
    numeric_predictions = (
        NumericPrediction(
            "user_share_found",
            "What share of the validation rows will the user audit flag?",
            "share of validation rows",
            "A validation review is flagged when any other review of its writer went to "
            "training; each review goes to validation with chance 1/4.",
            reported_as="the user audit flagged",
            absolute_band=0.06,
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        users = signature.get("shared_user_rows") or 0
        copies = signature.get("near_copies_found") or 0
        if not users and not copies:
            return "honest"  # the audits flag nothing: nothing crosses the split
        optimism, noise = signature.get("val_optimism"), signature.get("optimism_noise")
        if optimism is None or noise is None or optimism <= OPTIMISM_Z * noise:
            return "inconclusive"
        from_users = signature.get("expected_from_users") or 0.0
        from_copies = signature.get("expected_from_copies") or 0.0
        lines = (OPTIMISM_Z * noise, EXPECTED_Z * noise, EXPECTED_Z * noise)
        if any(
            abs(value - line) <= ON_THE_LINE * line
            for value, line in zip((optimism, from_users, from_copies), lines, strict=True)
        ):
            return "inconclusive"
        kinds = (from_users >= EXPECTED_Z * noise, from_copies >= EXPECTED_Z * noise)
        if all(kinds):
            return "both-leak"
        if kinds[0]:
            return "user-leakage"
        if kinds[1]:
            return "near-copy-leakage"
        return "inconclusive"


DRILL = GroupLeakage()
