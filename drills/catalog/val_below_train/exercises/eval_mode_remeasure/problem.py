"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The data come from the drill's teacher task
(drills/kit/synthetic_classification.py); the model is its MLP with dropout 0.5, trained for a
few full-batch steps so that it sits "halfway through training", where the loss with dropout
on and off clearly differ."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache

import torch
import torch.nn.functional as F
from torch import nn

from drills.kit.synthetic_classification import (
    LabelledSet,
    TeacherTask,
    build_mlp,
    draw_set,
    make_teacher,
)

TASK = TeacherTask(features=8, classes=4, sharpness=6.0)
TRAIN_EXAMPLES = 4096  # plenty for the model: validation then sits with the re-measured loss
VAL_EXAMPLES = 2048
HIDDEN = 32
DROPOUT = 0.5
PRETRAIN_EXAMPLES = 512  # the first examples of the set, which the pretraining steps see
PRETRAIN_STEPS = 30  # full-batch Adam steps with dropout on: "halfway through training"
PRETRAIN_LR = 3e-2
PROBE_EXAMPLES = 64  # inputs of the mode probe: one forward pass after the learner's function
# The mode each hidden run hands the model over in: run A as a training loop has it (train), run
# B as a validation routine would (eval). The function must leave it in the mode it came in.
HANDED_IN_TRAIN_MODE = (True, False)


@dataclass(frozen=True)
class Problem:
    model: nn.Sequential  # halfway through training, in train mode
    train_set: LabelledSet
    val_set: LabelledSet
    probe: torch.Tensor  # (PROBE_EXAMPLES, features)


@contextmanager
def one_thread() -> Iterator[None]:
    """One thread, as in the sandbox: the same bits on both sides of the wall."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)


def build(seed: int) -> Problem:
    """A fresh copy of the problem of `seed` (the judge asks several times: made once)."""
    made = _made(seed)
    model = build_mlp(TASK, HIDDEN, dropout=DROPOUT)
    model.load_state_dict(made.model.state_dict())
    model.train()
    return Problem(model, made.train_set, made.val_set, made.probe)


@lru_cache(maxsize=8)
def _made(seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    teacher = make_teacher(TASK, generator)
    train_set = draw_set(TASK, teacher, TRAIN_EXAMPLES, generator)
    val_set = draw_set(TASK, teacher, VAL_EXAMPLES, generator)
    probe = torch.randn(PROBE_EXAMPLES, TASK.features, generator=generator)
    with torch.random.fork_rng(devices=[]), one_thread():
        torch.manual_seed(seed)
        model = build_mlp(TASK, HIDDEN, dropout=DROPOUT)
        optimizer = torch.optim.Adam(model.parameters(), lr=PRETRAIN_LR)
        model.train()
        for _ in range(PRETRAIN_STEPS):
            head = slice(0, PRETRAIN_EXAMPLES)
            loss = F.cross_entropy(model(train_set.features[head]), train_set.labels[head])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()  # type: ignore[no-untyped-call]
            optimizer.step()
        for parameter in model.parameters():
            parameter.grad = None
    return Problem(model, train_set, val_set, probe)


def handed_in_train_mode(case: int) -> bool:
    return HANDED_IN_TRAIN_MODE[case % len(HANDED_IN_TRAIN_MODE)]


def probe_seed(seed: int) -> int:
    return seed + 104_729  # the dropout draws of the mode probe


def mode_probe(model: nn.Module, problem: Problem, seed: int) -> torch.Tensor:
    """One forward pass in whatever mode the model is in, with fixed dropout draws: in train
    mode it carries dropout, in eval mode it does not."""
    with torch.random.fork_rng(devices=[]), one_thread(), torch.no_grad():
        torch.manual_seed(probe_seed(seed))
        return model(problem.probe).detach().clone()  # type: ignore[no-any-return]
