"""The pieces "Validation below training" trains with: its config, and the training and
validation sets each data setting draws (the data setting is where most causes live)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch

from drills.kit.synthetic_classification import (
    LabelledSet,
    TeacherTask,
    concat_sets,
    decoded_examples,
    draw_set,
    first_examples,
    make_teacher,
    repeat_rows,
    select_rows,
    sets_digest,
)


@dataclass(frozen=True)
class ValBelowTrainConfig:
    dropout: float = 0.5
    augment_noise: float = 0.0  # std of the Gaussian noise added to the inputs in train mode
    eval_mode: str = "eval"  # the mode validation runs in; "train" is the bug
    # "follows-mode": dropout and noise are layers that eval mode switches off; "built-in":
    # written into the model so that they ignore its mode (drills/kit/mode_blind.py).
    randomness: str = "follows-mode"
    data: str = "fresh"  # the sets' source (DATA_SPLITS in __init__.py; see draw_sets)
    task: TeacherTask = field(default_factory=lambda: TeacherTask(features=8, sharpness=6.0))
    # Plenty of data for a small model, so the model generalises and any train/val difference
    # comes from how the losses are measured, not from overfitting.
    train_examples: int = 8192  # also the examples seen per epoch, whatever the set's size
    val_examples: int = 2048
    small_train_examples: int = 128  # "small-train": few enough to memorise their labels
    subset_train_examples: int = 512  # "subset-train": fitted better than fresh data, not by heart
    easy_val_confidence: float = 0.9  # "easy-val": the teacher's top probability at least this
    # "trimmed-val": a milder cleaning, dropping only the examples the teacher is least sure of.
    # How much easier that leaves validation varies with the teacher a seed draws: at 0.62 it
    # sat 9-28% under the re-scored training loss, and under the drill's 15% (read as sound
    # dropout, not as easier) on 1 of 20 random seeds; 0.66 still missed 1 of 60. 0.70 reads
    # as easier on 100 of 100 (21% on the worst seed of those that missed).
    trimmed_val_confidence: float = 0.70
    hidden: int = 16
    batch_size: int = 512
    epochs: int = 20
    lr: float = 5e-3  # peak Adam learning rate, decayed to 0 along a cosine
    last_epochs: int = 8  # the epochs the signature averages over (and measures spread on)


def draw_sets(
    config: ValBelowTrainConfig, generator: torch.Generator
) -> tuple[LabelledSet, LabelledSet, int]:
    """The training set, the validation set, and the rows of the validation file before its
    loader, as the data setting makes them; drawn from the run's data generator, so every
    setting starts from the same teacher and the same draws."""
    teacher = make_teacher(config.task, generator)
    val_set = draw_set(config.task, teacher, config.val_examples, generator)
    train_set = draw_set(config.task, teacher, config.train_examples, generator)
    val_file_rows = config.val_examples  # the validation file's rows, before any loader
    if config.data == "easy-val":
        val_set, _ = draw_confident_set(config, teacher, generator, config.easy_val_confidence)
    elif config.data in ("trimmed-val", "filtered-val"):
        val_set, drawn = draw_confident_set(
            config, teacher, generator, config.trimmed_val_confidence
        )
        if config.data == "filtered-val":
            # The file holds every example drawn; the validation loader's cleaning filter keeps
            # only the sure ones: the very set trimmed-val stores, trimmed on the way in.
            val_file_rows = drawn
    elif config.data == "small-train":
        train_set = first_examples(train_set, config.small_train_examples)
    elif config.data == "subset-train":
        train_set = first_examples(train_set, config.subset_train_examples)
    elif config.data == "val-from-train":
        # Validation cut from the training table's first rows, which stay in training: the
        # sets and the batches are the fresh setting's draws, so training is that run's, bit
        # for bit, and only validation scores examples the model trains on.
        val_set = first_examples(train_set, config.val_examples)
    elif config.data == "repeated-rows":
        # The subset's very examples, each repeated in turn to fill the full set's rows: the
        # loop shuffles them into the very batches it makes of the subset (train.epoch_order).
        subset = first_examples(train_set, config.subset_train_examples)
        train_set = repeat_rows(subset, config.train_examples)
    return train_set, val_set, val_file_rows


def draw_confident_set(
    config: ValBelowTrainConfig,
    teacher: torch.Tensor,
    generator: torch.Generator,
    confidence: float,
) -> tuple[LabelledSet, int]:
    """A validation set drawn only where the teacher's top probability is at least `confidence`:
    easier examples than the training set's (labels still drawn from the teacher, so its floor
    is lower); and how many examples were drawn to find them."""
    kept: list[LabelledSet] = []
    count = drawn = 0
    while count < config.val_examples:
        pool = draw_set(config.task, teacher, 4 * config.val_examples, generator)
        sure = pool.teacher_probs.max(dim=1).values >= confidence
        kept.append(select_rows(pool, sure))
        count += int(sure.sum())
        drawn += len(pool)
    merged = kept[0]
    for part in kept[1:]:
        merged = concat_sets(merged, part)
    return first_examples(merged, config.val_examples), drawn


DATA_NOTES = {
    "fresh": "training and validation sets are independent draws from the same teacher",
    "easy-val": "validation keeps only inputs the teacher is sure about: easier than training",
    "trimmed-val": "validation drops the inputs the teacher is least sure about: a bit easier",
    "small-train": "a small training set, seen many times per epoch; validation is fresh",
    "subset-train": "a subset of the training set, seen often each epoch; validation is fresh",
    "repeated-rows": "training rows that repeat fewer examples; validation is fresh",
    "filtered-val": "validation drops, on its way in, the inputs the teacher is least sure about",
    "val-from-train": "validation rows cut from the training table, which still holds them",
}


def describe_inputs(train_set: LabelledSet, val_set: LabelledSet, data: str) -> dict[str, Any]:
    return {
        "shapes": {
            "train_features": list(train_set.features.shape),
            "val_features": list(val_set.features.shape),
        },
        "sha256": sets_digest(train_set, val_set),
        "examples": decoded_examples(train_set),
        "note": DATA_NOTES[data],
    }
