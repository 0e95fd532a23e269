"""The hidden data of the honest-early-stop exercise, rebuilt from a seed: trusted code for both
the harness (inside the sandbox) and the checks (outside). The model and the optimizer are the
drill's (drills/catalog/overfitting_leakage/train.py): an MLP with about 19,000 weights, AdamW at
1.5e-3 in batches of 32, on the drill's 4-class teacher task whose labels are noisy (less noisy
on the small table). Unlike the drill, training runs in epochs, and the training table handed to
the learner holds exact copies of some validation examples, shuffled in among the fresh rows.
The clean held-out set is never handed out: nothing can have been copied from it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch
from torch import nn

from drills.catalog.overfitting_leakage.train import OverfittingConfig
from drills.kit.synthetic_classification import LabelledSet, build_mlp, draw_set, make_teacher

CONFIG = OverfittingConfig()  # the drill's task, sizes, model and optimizer
# Per hidden run: the task (the small run's labels less noisy than the drill's), the fresh
# training rows, and the validation examples copied into the training table. The small run's
# best epoch comes late (16-24 of them), the large run's early (4-6), and stopping 6 epochs
# away from either costs about 0.1 nats: no fixed number of epochs suits both.
TASKS = (replace(CONFIG.task, sharpness=6.0), CONFIG.task)
FRESH_ROWS = (64, 512)
COPIED = (64, 128)
EPOCHS = 40  # the starter's budget: past the best epoch of either run
FIRST_LAYER = "1"  # the model's first Linear (0 is the drill's input-noise layer, off here)
LAST_LAYER = "7"  # its output layer: the logits


@dataclass(frozen=True)
class Problem:
    train_x: torch.Tensor  # (rows, 16) float32: the training table as handed to train()
    train_y: torch.Tensor  # (rows,) int64
    copy_of: torch.Tensor  # (rows,) int64: the validation example a row copies, -1 if fresh
    val: LabelledSet  # the team's validation set, kept whole
    clean: LabelledSet  # held out by the judge: what the kept weights are scored on
    initial: dict[str, torch.Tensor]  # the model's weights before training

    @property
    def fresh(self) -> torch.Tensor:
        """(rows,) bool: the rows of the table that copy nothing."""
        return self.copy_of < 0


def build(case: int, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    task = TASKS[case]
    # Drawn in the drill's order: the teacher, validation, clean, then the fresh rows.
    teacher = make_teacher(task, generator)
    val = draw_set(task, teacher, CONFIG.val_examples, generator)
    clean = draw_set(task, teacher, CONFIG.clean_examples, generator)
    fresh = draw_set(task, teacher, FRESH_ROWS[case], generator)
    copied = torch.randperm(CONFIG.val_examples, generator=generator)[: COPIED[case]]
    features = torch.cat([fresh.features, val.features[copied]])
    labels = torch.cat([fresh.labels, val.labels[copied]])
    copy_of = torch.cat([torch.full((len(fresh),), -1), copied])
    # The copies are shuffled in: no slice of the table holds them all.
    order = torch.randperm(len(labels), generator=generator)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = build_mlp(task, CONFIG.hidden, dropout=0.0)
    initial = {name: t.detach().clone() for name, t in model.state_dict().items()}
    return Problem(features[order], labels[order], copy_of[order], val, clean, initial)


def fresh_model(problem: Problem) -> nn.Sequential:
    """The drill's MLP at the problem's initial weights."""
    model = build_mlp(CONFIG.task, CONFIG.hidden, dropout=0.0)
    model.load_state_dict(problem.initial)
    return model
