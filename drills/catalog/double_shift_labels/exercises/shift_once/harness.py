"""Runs inside the sandbox with the learner's file: trains the model with the learner's labels
(a trusted loop around prepare_labels), then asks prepare_labels for the hidden probes' labels
and sends back, beside them, the copies of the probes it was handed, as it left them."""

from __future__ import annotations

from types import ModuleType

import torch

from drills.catalog.double_shift_labels.exercises.shift_once.problem import (
    BATCH,
    SOURCE,
    STEPS,
    LabelBatch,
    build,
    cosine_lr,
    label_batch,
    probe_batches,
)
from drills.exercises.contract import ContractError
from drills.exercises.running import CaseOutput, Report, labels_tensor, state_of
from drills.kit.causal_lm import IGNORE


def learner_labels(learner: ModuleType, batch: LabelBatch) -> torch.Tensor:
    """The learner's labels for `batch`, which it may change in place: hand it a copy."""
    returned = learner.prepare_labels(batch.input_ids, batch.attention_mask, batch.response_mask)
    labels = labels_tensor(returned, batch.input_ids, "prepare_labels")
    valid = (labels == IGNORE) | ((labels >= 0) & (labels < SOURCE.vocab))
    if not bool(valid.all()):
        raise ContractError(
            f"prepare_labels returned a label that is neither a token id (0..{SOURCE.vocab - 1}) "
            f"nor {IGNORE}"
        )
    return labels


def run_case(learner: ModuleType, case: int, seed: int, report: Report) -> CaseOutput:
    problem = build(seed)
    model = problem.model
    optimizer = torch.optim.Adam(model.parameters(), lr=cosine_lr(0))
    for step in range(STEPS):
        batch = label_batch(problem.source.sample(BATCH, problem.data_rng))
        labels = learner_labels(learner, batch.copy())
        _, loss = model(batch.input_ids, labels)
        assert loss is not None
        if not bool(torch.isfinite(loss)):
            raise ContractError(
                "no label of a training batch counted in the loss (the model scores position t "
                "against labels[t + 1]), so its mean is 0/0"
            )
        for group in optimizer.param_groups:
            group["lr"] = cosine_lr(step)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
        report("loss", step, loss.item())
    tensors = {}
    for i, batch in enumerate(probe_batches(problem.source, seed)):
        handed = batch.copy()
        tensors[f"probe-{i}"] = learner_labels(learner, handed)
        tensors[f"handed-{i}"] = handed.stacked()  # the copy as prepare_labels left it
    return CaseOutput(weights=state_of(model), tensors=tensors)
