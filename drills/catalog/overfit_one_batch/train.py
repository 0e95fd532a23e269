"""The training loop of "Overfit a single batch", with the chosen data bug injected.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from drills.catalog.overfit_one_batch.fixed_batch import FixedBatchWatch
from drills.catalog.overfit_one_batch.setup import (
    MLP,
    PADDING,
    OverfitConfig,
    broadcast_mse,
    describe_inputs,
    empty_slice,
    entropy_of_labels,
    make_batch,
    probability_of_true_class,
)
from drills.catalog.overfit_one_batch.signature import OverfitSignature
from drills.core.contract import DrillError, DrillOutcome, Reporter
from drills.kit.audit import relative_weight_change, total_grad_norm
from drills.kit.mode_blind import repeats_in_eval_mode
from drills.kit.run import Run

LossFn = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train on one fixed batch with the chosen bug injected; see OverfitOneBatch."""
    config = OverfitConfig(
        examples=knobs["examples"], bug=knobs["bug"], lr=knobs["lr"], steps=knobs["steps"]
    )
    run = Run(seed, report)
    bug, classes = config.bug, config.classes
    batch = make_batch(config, run.data_rng)
    loader_calls = 1
    regress_score = bug in ("broadcast-target", "batch-averaged-output")
    averaged = bug == "batch-averaged-output"
    # Reseeded, the randomness is on as well: the seed set before each step makes it repeat.
    randomness_on = bug in ("randomness-on", "randomness-reseeded")
    reseeded = bug == "randomness-reseeded"
    mode_blind = bug == "randomness-built-in"
    edited_in_place = bug == "batch-edited-in-place"
    fresh = bug == "fresh-batch-each-step"
    sliced = bug == "slice-moves-each-step"
    if sliced:
        # The data table the step slices: the loaded batch, then as many rows again as the
        # other steps read, drawn in the order a fresh loader batch per step would draw them.
        blocks = [batch, *(make_batch(config, run.data_rng) for _ in range(config.steps - 1))]
        table = {
            "features": torch.cat([block.features for block in blocks]),
            "labels": torch.cat([block.labels for block in blocks]),
        }

    # What the loss compares the predictions with.
    loss_fn: LossFn
    torch_warnings: set[str] = set()
    if regress_score:
        targets = batch.scores

        def loss_fn(prediction: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
            if averaged:
                # The bug: the output is pooled over dim 0, the batch, so one prediction
                # stands for every example and the loss can only reach the target variance.
                prediction = prediction.mean(dim=0)
            value, caught = broadcast_mse(prediction, target)
            torch_warnings.update(caught)  # keep torch's warning as evidence
            return value

        outputs = 1
    else:
        targets = batch.labels.clone()
        if bug == "all-padding":
            targets.fill_(PADDING)
        if bug == "empty-slice":
            # The bug: the one batch is sliced from where the data ends: no example in it.
            batch = empty_slice(batch)
            targets = batch.labels
        loss_fn, outputs = F.cross_entropy, config.classes

    model = MLP(config, outputs, mode_blind=mode_blind)
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    run.watch(model, optimizer)
    # The overfit check is meant to run with randomness off: eval mode disables dropout.
    model.train(randomness_on)

    signature = OverfitSignature(
        examples=len(batch.labels),
        prediction_rows=1 if averaged else len(batch.labels),
        supervised_targets=int((targets != PADDING).sum()) if not regress_score else None,
        chance_loss=math.log(config.classes),
        label_entropy=None if regress_score else entropy_of_labels(batch.labels, classes),
        target_variance=float(targets.var(correction=0)) if regress_score else None,
    )
    inputs = describe_inputs(batch, targets, bug)

    if signature.supervised_targets == 0:
        raw = F.cross_entropy(model(batch.features), targets, ignore_index=PADDING)
        message = (
            f"no supervised targets: all {config.examples} labels are masked as padding "
            f"(ignore_index={PADDING}), so the mean cross-entropy is 0/0 = {raw.item()}; "
            "there is nothing to train on"
            if len(targets)
            else f"no supervised targets: the batch holds no example (features "
            f"{list(batch.features.shape)}), so the mean cross-entropy is 0/0 = {raw.item()}; "
            "there is nothing to train on"
        )
        signature.raw_loss_finite = bool(torch.isfinite(raw))
        outcome = run.outcome(signature, inputs=inputs, error=message, loss_sum=0.0, loss_count=0)
        raise DrillError(message, outcome=outcome)

    # The batch as the loop holds it from step to step, the way a loader hands one out: a
    # dict of tensors. Its contents at each step's start are compared, bit for bit, with the
    # first step's (a clone kept aside), as are the model's input and torch's random state.
    held = {"features": batch.features.clone(), "labels": targets}
    watch = FixedBatchWatch(held)
    for step in range(config.steps):
        if reseeded:
            torch.manual_seed(config.reseed)  # the same seed before every step
        if fresh and step > 0:
            # The bug: the loop asks the loader for its next batch at every step, and the
            # loader draws a new one, so no batch is ever seen twice.
            fresh_batch = make_batch(config, run.data_rng)
            loader_calls += 1
            held = {"features": fresh_batch.features, "labels": fresh_batch.labels}
        if sliced and step > 0:
            # The bug, kept from the epoch loop this check was adapted from: the rows are
            # sliced with the step counter, so each step reads the next rows of the table.
            rows = slice(step * config.examples, (step + 1) * config.examples)
            held = {"features": table["features"][rows], "labels": table["labels"][rows]}
        watch.step_starts(held)
        x = held["features"]
        if edited_in_place:
            # The bug: x is the dict's own tensor, and += writes the "augmentation" into it, so
            # the noise piles up in the batch the next step reads again.
            x += config.drift_noise * torch.randn_like(x)
        if randomness_on:
            x = x + config.augment_noise * torch.randn_like(x)  # fresh noise every step
        watch.model_input(x, held)
        step_targets = held["labels"]
        if bug == "shuffled-labels":
            step_targets = targets[torch.randperm(config.examples)]

        output = model(x)
        loss = loss_fn(output, step_targets)
        if run.stop_if_nonfinite(step, loss.item()):
            break  # diverged: stop rather than plot NaN
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        grad_norm = total_grad_norm(model.parameters())
        if run.stop_if_nonfinite(step, grad_norm):
            break
        optimizer.step()

        run.log("loss", step, loss.item())
        if not regress_score:
            run.log("p_correct", step, probability_of_true_class(output, held["labels"]))
        run.log("grad_norm", step, grad_norm)

    # Re-measure the final weights without training noise, against the true targets.
    model.eval()
    with torch.no_grad():
        measured = model(batch.features)
        eval_loss = loss_fn(measured, targets).item()
        # The same batch once more in eval mode: a model whose randomness eval mode switches
        # off answers bit for bit the same (NaN weights give NaN both times: the same answer).
        signature.eval_repeatable = repeats_in_eval_mode(model, batch.features, first=measured)
    losses = run.values("loss")
    signature.steps_run = len(losses)
    signature.initial_loss = run.first("loss")
    signature.final_loss = run.tail_mean("loss")
    signature.min_loss = min(losses) if losses else None
    signature.peak_loss = max(losses) if losses else None
    signature.loss_noise = run.tail_std("loss")
    signature.final_p_correct = run.tail_mean("p_correct")
    signature.eval_loss = eval_loss if math.isfinite(eval_loss) else None
    signature.weight_change = relative_weight_change(run.parameter_rows())
    signature.nonfinite_step = run.nonfinite_step
    watch.fill(signature, held, batch.features)
    signature.loader_calls = loader_calls
    return run.outcome(signature, inputs=inputs, torch_warnings=sorted(torch_warnings))
