"""Loss spikes: is it the data or the optimizer?

A small classifier trains for several epochs over the same batches in the same order. A spike
that comes back at the same place in every epoch points at one batch; replaying that step from
a checkpoint, once with the suspect batch and once with a normal one, settles it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.catalog.loss_spikes.signature import SpikesSignature
from drills.core.contract import Chart, Drill, Hypothesis, Knob, Observation

# Thresholds diagnose() reads the numbers with (the spike finder's own live in SpikesConfig,
# setup.py: a step counts as a spike when its loss is 3x the median of the 5 steps before it).
# Spikes recur when at least 3 epochs spike at the same place and at least half of all the
# spikes land there (a broken batch's step can knock the next batch up too: an echo).
RECUR_EPOCHS = 3
RECUR_SHARE = 0.5
# The replay pins a spike on its batch when, from the same state, the suspect batch's loss is
# at least 3x and 0.5 nats above a normal batch's.
BATCH_SPECIFIC = 3.0
BATCH_SPECIFIC_RISE = 0.5
# Clipping contained a spike when it cut the spike steps to at most 70% of the update their raw
# gradient asked for (without clipping the share is exactly 1). Measured on seeds 0-4: clip 2
# gives 0.45-0.55, clip 3 gives 0.83-1, clip 5 and no clip give 1.
CONTAINED_AT = 0.7
MANY_SPIKES = 3  # this many spikes that do not line up are not noise
BLEW_UP = 5.0  # the loss at some step over 5x its starting value: the run blew up
# The model ends within 10% of the loss of guessing on the correct labels: it learned next to
# nothing, and a broken batch cannot stand out from batches the model has not learned either
# (lr 0 and 0.001 end at >= 0.97 of chance on seeds 0-4; lr 0.01, the next that learns, <= 0.85).
STALLED_ABOVE = 0.9


# The hypotheses whose spikes belong to one batch: the references read against them.
BATCH_BORNE = ("bad-batch", "bad-batch-contained")


class LossSpikes(Drill):
    slug = "loss-spikes"
    position = 80
    title = "Loss spikes"
    summary = "A spike that returns at the same place every epoch is a batch, not bad luck."
    symptom = "The training loss falls nicely, then jumps up for a step, again and again."
    scenario = (
        "A small MLP learns to sort 16-feature points into 4 classes: 160 examples in 10 "
        "batches of 16, 8 epochs, the batches in the same order every epoch, plain gradient "
        "descent. After training, the drill reloads a checkpoint from just before the worst "
        "spike and replays that step twice: with the batch that spiked and with a normal one. "
        "Choose whether one batch is corrupt, the clipping and the learning rate, "
        "predict what the curve and the replay will show, then run it."
    )
    version = "3"
    healthy = "clean"
    signature_type = SpikesSignature
    knobs = (
        Knob(
            "bad_batch",
            "choice",
            "on",
            "on: one batch of the fixed order has every label moved to the wrong class in the "
            "stored data, as a botched join would do; loader: the stored labels are right, but "
            "the loader maps that batch's class ids through a table one place off, so training "
            "sees the same wrong labels; off: all batches are correct.",
            choices=("on", "off", "loader"),
        ),
        Knob(
            "clip",
            "float",
            0.0,
            "Largest gradient norm allowed per step (larger gradients are scaled down to it); "
            "0 turns clipping off. Normal steps here have gradient norms below 1.",
            minimum=0.0,
            maximum=100.0,
        ),
        Knob(
            "lr",
            "float",
            0.5,
            "Learning rate of plain gradient descent (no momentum).",
            minimum=0.0,
            maximum=10.0,
            log_scale=True,
        ),
        Knob(
            "hardcoded_lr",
            "float",
            0.0,
            "A rate typed into the loop where it builds its optimizer, left over from an "
            "earlier try: above 0 the optimizer steps with it and lr never reaches it; 0: the "
            "optimizer takes lr.",
            minimum=0.0,
            maximum=10.0,
        ),
    )
    hypotheses = (
        Hypothesis(
            "bad-batch",
            "One batch is broken: the loss jumps at the same place in every epoch, replaying that "
            "batch from a checkpoint jumps again while a normal batch does not, and each jump "
            "knocks the model back.",
        ),
        Hypothesis(
            "bad-batch-contained",
            "One batch is broken and still jumps at the same place every epoch, but clipping "
            "cuts its steps to 70% or less of the update its gradient asks for, so each jump "
            "knocks the model back less.",
        ),
        Hypothesis(
            "unstable",
            "The training itself is unstable: the loss jumps or blows up at no fixed place in the "
            "epoch, so no single batch explains it.",
        ),
        Hypothesis(
            "inconclusive",
            "Cannot tell yet: replaying the suspect step pins a jump on one batch (its loss at "
            "least 3x and 0.5 nats above a normal batch's), but the loss spiked at that place in "
            "fewer than 3 epochs, the line for a spike that recurs. The model has only just "
            "learned enough for wrong labels to stand out; more epochs or a larger rate decide.",
        ),
        Hypothesis(
            "stalled",
            "The steps are too small to teach the model anything: every batch's loss stays "
            "near the loss of guessing, so a broken batch has nothing to stand out from.",
        ),
        Hypothesis(
            "clean",
            "Nothing recurs: the loss falls with ordinary batch-to-batch wobble and no step "
            "stands out.",
        ),
    )
    charts = (
        Chart(
            "loss",
            "Training loss of each batch",
            ("loss",),
            "cross-entropy",
            log_y=True,
            labels={"loss": "batch loss"},
        ),
        Chart(
            "clean_loss",
            "Loss on the correct labels of all the data, after each step",
            ("clean_loss",),
            "cross-entropy",
            log_y=True,
            labels={"clean_loss": "loss on clean labels"},
        ),
        Chart(
            "grad_norm",
            "Gradient norm (before clipping)",
            ("grad_norm",),
            "L2 norm",
            log_y=True,
            labels={"grad_norm": "gradient norm"},
        ),
        Chart(
            "update_norm",
            "How far each step moved the weights",
            ("update_norm",),
            "L2 norm",
            log_y=True,
            labels={"update_norm": "step size"},
        ),
    )
    observations = (
        Observation("initial_loss", "Loss at the first step", "chance_loss"),
        Observation("final_loss", "Final training loss (mean of the last 10% of steps)"),
        Observation("final_clean_loss", "Final loss on the correct labels of all the data"),
        Observation("spike_count", "Spikes (loss over 3x the median of the 5 steps before)"),
        Observation("spike_steps", "Steps that spiked"),
        Observation("spike_position", "Place in the epoch where spikes recur (0 = first batch)"),
        # A broken batch spikes in every epoch; nothing else is expected to recur at all.
        Observation("spike_repeats", "Epochs with a spike at that place", "epochs", BATCH_BORNE),
        Observation("spike_height", "Typical spike height (x the loss just before)"),
        Observation(
            "spike_setback",
            "How much a spike step raises the loss on the correct data (nats)",
            "normal_step_change",
            reference_for=BATCH_BORNE,
        ),
        Observation(
            "spike_grad_norm", "Gradient norm at the spikes", "normal_grad_norm", BATCH_BORNE
        ),
        Observation(
            "spike_update_share",
            "Update a spike step made / update its gradient asked for (1 = not clipped)",
            "normal_update_share",
            reference_for=BATCH_BORNE,
        ),
        Observation(
            "replay_suspect_loss",
            "Replay from the checkpoint: loss on the batch that spiked",
            "replay_recorded_loss",
        ),
        Observation(
            "replay_normal_loss", "Replay from the same checkpoint: loss on a normal batch"
        ),
        Observation("replay_suspect_setback", "Replay: setback caused by the suspect batch's step"),
        Observation("replay_normal_setback", "Replay: setback caused by the normal batch's step"),
        Observation("max_loss", "Highest training loss of the run", "initial_loss"),
        Observation("nonfinite_step", "First step with a non-finite loss, gradient or weights"),
        Observation("configured_lr", "Learning rate the settings ask for"),
        Observation("optimizer_lr", "Learning rate the optimizer stepped with", "configured_lr"),
        Observation(
            "loader_changed_labels",
            "Labels the loader yields that differ from the stored data's",
        ),
    )

    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        if signature.get("nonfinite_step") is not None:
            return "unstable"
        count = signature.get("spike_count") or 0
        repeats = signature.get("spike_repeats") or 0
        recurring = repeats >= RECUR_EPOCHS and repeats >= RECUR_SHARE * count
        suspect, normal = signature.get("replay_suspect_loss"), signature.get("replay_normal_loss")
        batch_specific = (
            suspect is not None
            and normal is not None
            and suspect >= BATCH_SPECIFIC * normal
            and suspect - normal >= BATCH_SPECIFIC_RISE
        )
        if recurring and batch_specific:
            # Contained by what clipping did to the spike steps, not by how much they cost: the
            # cost grows smoothly with the rate and the clip, with no gap to draw a line in.
            share = signature.get("spike_update_share")
            if share is not None and share <= CONTAINED_AT:
                return "bad-batch-contained"
            return "bad-batch"
        initial, peak = signature.get("initial_loss"), signature.get("max_loss")
        blew_up = initial is not None and peak is not None and peak > BLEW_UP * initial
        if count >= MANY_SPIKES or recurring or blew_up:
            return "unstable"  # jumps the replay cannot pin on one batch
        if batch_specific:
            return "inconclusive"  # the replay pins a batch, the curve has not shown it enough
        final, chance = signature.get("final_clean_loss"), signature.get("chance_loss")
        if final is not None and chance is not None and final > STALLED_ABOVE * chance:
            return "stalled"
        return "clean"  # at most a stray blip or two


DRILL = LossSpikes()
