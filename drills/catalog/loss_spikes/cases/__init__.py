"""Cases on the loss-spikes drill: a small classifier trained epoch after epoch over the same
batches in the same order, whose loss jumps now and then. A jump that returns at the same place
every epoch and comes back when that step is replayed from a checkpoint belongs to one batch; a
run whose steps are too large jumps anywhere; clipping blunts a bad batch's steps without
removing it; and ordinary wobble is not a spike at all.

Every cause a case hides has a look-alike that trains step for step the same run (issue 27: the
symptom must not decide): wrong labels stored in the file and a loader that gets the same labels
wrong on the way in; a learning rate configured too large and a sound one the loop ignores for
a number typed into its optimizer. Only looking at the stored batch, or at the rate the optimizer
holds, tells them apart, and each has its own fix. The experiments' readings are in
readings.py."""

from __future__ import annotations

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.loss_spikes.cases.readings import (
    after_lowering_the_rate,
    batch_on_disk_and_loaded,
    rate_in_the_optimizer,
    replay_suspect_step,
    spike_step_size,
    where_spikes_land,
)

CASE_SET = CaseSet(
    drill="loss-spikes",
    causes=(
        Cause(
            "ordinary-wobble",
            "healthy",
            "Nothing is wrong: the loss falls with the ordinary batch-to-batch wobble.",
            {"bad_batch": "off"},
            "clean",
            fix="change-nothing",
        ),
        Cause(
            "corrupt-batch",
            "data",
            "One batch carries wrong labels: every epoch its step pushes the model the wrong way.",
            {"bad_batch": "on"},
            "bad-batch",
            fix="repair-the-batch",
            exercise="loss-spikes-wrong-labels",
        ),
        Cause(
            "corrupt-batch-clipped",
            "data",
            "One batch carries wrong labels; gradient clipping shortens its steps but does not "
            "remove it.",
            {"bad_batch": "on", "clip": 1.0},
            "bad-batch-contained",
            fix="repair-the-batch",
        ),
        # The two causes below are the two above made on the way in: the file is right, the
        # loader is not. Training sees the very same batches, so only looking at the stored
        # batch tells them apart, and only repairing the loader heals them.
        Cause(
            "loader-mislabels-a-batch",
            "data",
            "The data on disk is right, but the loader gives one batch's examples the wrong "
            "classes on the way in: every epoch that batch's step pushes the model the wrong way.",
            {"bad_batch": "loader"},
            "bad-batch",
            fix="repair-the-loader",
        ),
        Cause(
            "loader-mislabels-a-batch-clipped",
            "data",
            "The data on disk is right, but the loader gives one batch's examples the wrong "
            "classes on the way in; gradient clipping shortens that batch's steps but does not "
            "remove it.",
            {"bad_batch": "loader", "clip": 1.0},
            "bad-batch-contained",
            fix="repair-the-loader",
        ),
        Cause(
            "steps-too-large",
            "optimizer",
            "The learning rate is too large for this model: the steps overshoot and the loss "
            "jumps wherever the weights happen to be. The loop's gradient clipping keeps the run "
            "from blowing up, not from overshooting.",
            # Clipped at 2, a rate of 3 leaps and recovers for all eight epochs, as the stories
            # say the loss does; unclipped (it was 5) the loss overflowed within a dozen steps.
            {"bad_batch": "off", "lr": 3.0, "clip": 2.0},
            "unstable",
            fix="lower-learning-rate",
        ),
        # The same run as steps-too-large, step for step: the optimizer steps at 3 either way.
        # Only the configured rate differs, and so does what heals it.
        Cause(
            "rate-typed-into-the-loop",
            "optimizer",
            "The configured learning rate is sound, but the loop builds its optimizer with a "
            "large rate typed in by hand, so the setting never reaches it: the steps overshoot "
            "and the loss jumps wherever the weights happen to be. Gradient clipping keeps the "
            "run from blowing up, not from overshooting.",
            {"bad_batch": "off", "hardcoded_lr": 3.0, "clip": 2.0},
            "unstable",
            fix="use-the-configured-rate",
        ),
    ),
    experiments=(
        Experiment(
            "where-spikes-land",
            "List the steps that spiked",
            "Mark every step whose loss is over 3x the median of the 5 before it, and see at "
            "which place in the epoch each one falls.",
            shows=("numbers",),
            observations=("spike_count", "spike_steps", "spike_position", "spike_repeats"),
            reading=where_spikes_land,
        ),
        Experiment(
            "replay-from-checkpoint",
            "Replay the worst spike from a checkpoint",
            "Reload the model and optimizer from just before the worst spike and take that step "
            "twice: once with the batch that spiked, once with a normal batch.",
            shows=("numbers", "tables"),
            observations=("replay_suspect_loss", "replay_normal_loss"),
            reading=replay_suspect_step,
        ),
        Experiment(
            "lower-rate-10x",
            "Rerun with a 10x smaller learning rate",
            "Train again from scratch with the learning rate divided by 10: do the jumps go, "
            "or stay where they were?",
            change=Change(scale={"lr": 0.1}),
            shows=("numbers",),
            observations=("spike_count", "spike_repeats", "final_clean_loss"),
            reading=after_lowering_the_rate,
        ),
        Experiment(
            "compare-stored-and-loaded",
            "Compare the stored batches with what the loader yields",
            "Read every batch's labels straight from the data file and count those that differ "
            "from the labels the loader hands to training.",
            shows=("numbers",),
            observations=("loader_changed_labels",),
            reading=batch_on_disk_and_loaded,
        ),
        Experiment(
            "print-optimizer-rate",
            "Print the optimizer's learning rate",
            "Print the learning rate the settings ask for next to the one the optimizer's "
            "parameter groups hold while it trains.",
            shows=("numbers",),
            observations=("configured_lr", "optimizer_lr"),
            reading=rate_in_the_optimizer,
        ),
        Experiment(
            "spike-step-size",
            "Compare each spike's step with its gradient",
            "At every spike, divide the size of the step taken by the learning rate times the "
            "raw gradient norm: is anything cutting the steps short?",
            shows=("numbers",),
            observations=("spike_grad_norm", "spike_update_share", "normal_update_share"),
            reading=spike_step_size,
        ),
        Experiment(
            "clip-at-one",
            "Rerun with gradients clipped at norm 1",
            "Train again with every gradient scaled down to a norm of at most 1.",
            change=Change(set={"clip": 1.0}),
            shows=("numbers",),
            observations=("spike_count", "spike_repeats", "spike_update_share", "max_loss"),
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: the wobble is ordinary.", Change()),
        Fix(
            "repair-the-batch",
            "Repair the labels of the batch that spikes every epoch in the stored data.",
            Change(replace={"bad_batch": {"on": "off"}}),
        ),
        Fix(
            "repair-the-loader",
            "Repair the loader's mapping of class ids for the batch that spikes every epoch.",
            Change(replace={"bad_batch": {"loader": "off"}}),
        ),
        Fix(
            "use-the-configured-rate",
            "Build the optimizer with the configured learning rate, not a number typed into "
            "the loop.",
            Change(set={"hardcoded_lr": 0.0}),
        ),
        Fix(
            "lower-learning-rate",
            "Divide the learning rate by 10.",
            Change(scale={"lr": 0.1}),
        ),
        Fix(
            "clip-gradients",
            "Clip the gradient norm at 1.",
            Change(set={"clip": 1.0}),
        ),
        Fix(
            "more-epochs",
            "Train for more epochs: the spikes will average out.",
            Change(),  # the drill's epoch count is fixed: a plausible change that alters nothing
        ),
    ),
    charts=(
        ShownChart(
            "Training loss per batch", "cross-entropy", {"loss": "training loss"}, log_y=True
        ),
        ShownChart("Gradient norm", "L2 norm", {"grad_norm": "gradient norm"}, log_y=True),
    ),
    base={"clip": 0.0},
    nuisance={"lr": (0.4, 0.45, 0.5)},
    symptom_observations=("initial_loss", "final_loss", "max_loss"),
)

CASES = (
    Case(
        "a-loss-that-jumps",
        "A loss that jumps",
        "A small classifier trains for eight epochs over the same ten batches. The loss falls "
        "between jumps, but it jumps again and again.",
        CASE_SET,
        causes=(
            "corrupt-batch",
            "loader-mislabels-a-batch",
            "steps-too-large",
            "rate-typed-into-the-loop",
        ),
        retired=("corrupt-batch-clipped",),
    ),
    Case(
        "jumps-after-a-change",
        "Jumps after a change",
        "Since a change to a small classifier's set-up last week, its loss leaps up at times "
        "during training.",
        CASE_SET,
        causes=("steps-too-large", "rate-typed-into-the-loop"),
        retired=("corrupt-batch",),
    ),
    Case(
        "a-colleagues-curve",
        "A colleague's per-batch loss",
        "A colleague shows you the per-batch loss of a small classifier trained over the same ten "
        "batches for eight epochs, which jumps now and then. They ask whether something in the "
        "data or the optimizer needs fixing before they move on.",
        CASE_SET,
        causes=(
            "corrupt-batch-clipped",
            "loader-mislabels-a-batch-clipped",
            "steps-too-large",
            "rate-typed-into-the-loop",
        ),
        # A healthy run never jumps: its curve alone named it, so no draw hides it any more.
        retired=("ordinary-wobble",),
    ),
)
