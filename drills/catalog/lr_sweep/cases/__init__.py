"""Cases on the lr-sweep drill: a sweep of learning rates that should bracket a good one, read
from its curves. Rates that are all too small, all too large, or too far apart to land between
the two edges each leave a sweep that picks no usable rate; which edge each rate sits on tells
them apart. A loop whose optimizer steps nothing leaves every curve of a sound sweep flat, whether
it clears the gradients between the backward pass and the step or holds a copy of the model:
what the optimizer held, and found, at its step tells them apart."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from drills.cases.contract import Case, CaseSet, Cause, Change, Experiment, Fix, ShownChart
from drills.catalog.lr_sweep import DRILL
from drills.catalog.lr_sweep.verdicts import FALLS, UNSTABLE, verdicts

BRACKETING = (1e-6, 1e-4, 1e-2, 1.0)
TOO_SMALL = (1e-7, 1e-6, 1e-5)
TOO_LARGE = (3.0, 10.0)
TOO_SPARSE = (1e-5, 3.0)


def largest_rate(signature: Mapping[str, Any], error: str | None) -> str:
    """What the largest rate of the sweep did: misbehave (the sweep reaches the edge) or not."""
    found = verdicts(signature)
    if not found:
        return "no-rates"
    return "largest-misbehaves" if found[-1] in UNSTABLE else "largest-stays-stable"


def smallest_rate(signature: Mapping[str, Any], error: str | None) -> str:
    found = verdicts(signature)
    if not found:
        return "no-rates"
    return "smallest-misbehaves" if found[0] in UNSTABLE else "smallest-stays-stable"


def any_rate_trains(signature: Mapping[str, Any], error: str | None) -> str:
    return "some-rate-trains" if FALLS in verdicts(signature) else "no-rate-trains"


def rates_as_tabulated(signature: Mapping[str, Any], error: str | None) -> str:
    """The sweep's reading from its rows alone (what each rate did to the loss): the table does
    not say what the optimizer held or found at its step, so neither may this."""
    shown = {
        key: value
        for key, value in signature.items()
        if key not in ("gradless_count", "outside_optimizer_count")
    }
    return DRILL.diagnose(shown, error)


def steps_taken(signature: Mapping[str, Any], error: str | None) -> str:
    """What the optimizer stepped at every rate: none of the model's weights, weights without a
    gradient, or the weights with their gradients."""
    rates = signature.get("lr_count")
    if not rates:
        return "no-rates"
    if signature.get("outside_optimizer_count") == rates:
        return "holds-none-of-the-weights"
    if signature.get("gradless_count") == rates:
        return "no-gradient-at-the-step"
    return "steps-taken"


CASE_SET = CaseSet(
    drill="lr-sweep",
    causes=(
        Cause(
            "nothing-wrong",
            "healthy",
            "Nothing is wrong: the sweep brackets a good rate, from rates that do nothing to "
            "one that misbehaves, with a rate in between that trains well.",
            {"lrs": BRACKETING},
            "bracketed",
            fix="change-nothing",
        ),
        Cause(
            "all-rates-too-small",
            "optimizer",
            "Every rate in the sweep is far too small: each step moves the weights too little "
            "to change the loss within the run.",
            {"lrs": TOO_SMALL},
            "too-cautious",
            fix="shift-sweep-up",
        ),
        Cause(
            "all-rates-too-large",
            "optimizer",
            "Every rate in the sweep is too large: each step overshoots, and the loss jumps up "
            "or overflows.",
            {"lrs": TOO_LARGE},
            "too-aggressive",
            fix="shift-sweep-down",
        ),
        Cause(
            "gradients-cleared-before-step",
            "optimizer",
            "The loop clears the gradients after the backward pass and before the optimizer's "
            "step, so every step is taken on no gradient: no rate, however large, moves a weight.",
            {"lrs": BRACKETING, "zero_grad": "after-backward"},
            "no-step",
            fix="clear-before-backward",
        ),
        Cause(
            "optimizer-on-a-copy",
            "optimizer",
            "The optimizer was built on a copy of the model: it steps weights the forward pass "
            "never uses, while the model's own weights collect their gradients and stay put.",
            {"lrs": BRACKETING, "optimizer_holds": "a-copy"},
            "not-optimized",
            fix="optimize-the-model",
        ),
        Cause(
            "rates-too-far-apart",
            "evaluation",
            "The sweep's rates are too far apart: one sits below the useful range and the next "
            "above it, so the sweep never tries a rate that works.",
            {"lrs": TOO_SPARSE},
            "gap",
            fix="fill-the-gap",
        ),
    ),
    experiments=(
        Experiment(
            "per-rate-table",
            "One row per rate",
            "Tabulate each rate's final loss, its relative drop, its highest loss and where "
            "(if anywhere) it overflowed.",
            shows=("tables",),
            reading=rates_as_tabulated,
        ),
        Experiment(
            "largest-rate",
            "What the largest rate did",
            "Look only at the largest rate of the sweep: did the loss jump up or overflow?",
            shows=("numbers",),
            observations=("unstable_count", "smallest_unstable_lr", "largest_stable_lr"),
            reading=largest_rate,
        ),
        Experiment(
            "smallest-rate",
            "What the smallest rate did",
            "Look only at the smallest rate of the sweep: did it stay stable?",
            shows=("numbers",),
            observations=("flat_count", "initial_loss"),
            reading=smallest_rate,
        ),
        Experiment(
            "step-sizes",
            "How far the weights moved",
            "For each rate, what did the optimizer step: did it hold the model's weights, and "
            "did it find a gradient on them?",
            shows=("numbers",),
            observations=("outside_optimizer_count", "gradless_count"),
            reading=steps_taken,
        ),
        Experiment(
            "parameter-health",
            "Every weight's health",
            "For each rate, tabulate every weight of the model: did it get a gradient, does the "
            "optimizer hold it, and did it move?",
            shows=("parameters",),
        ),
        Experiment(
            "any-rate-trains",
            "Does any rate train steadily?",
            "Count the rates that brought the loss down steadily, without a jump.",
            shows=("numbers",),
            observations=("falling_count", "best_lr", "best_final_loss"),
            reading=any_rate_trains,
        ),
    ),
    fixes=(
        Fix("change-nothing", "Change nothing: pick the best rate the sweep found.", Change()),
        Fix(
            "shift-sweep-up",
            "Move the sweep up: rates from 1e-6 to 1, a factor of 100 apart.",
            Change(replace={"lrs": {TOO_SMALL: BRACKETING}}),
        ),
        Fix(
            "shift-sweep-down",
            "Move the sweep down: rates from 1e-4 to 1, a factor of 100 apart.",
            Change(replace={"lrs": {TOO_LARGE: (1e-4, 1e-2, 1.0)}}),
        ),
        Fix(
            "fill-the-gap",
            "Fill the gap: add rates between the two, a factor of 100 apart.",
            Change(replace={"lrs": {TOO_SPARSE: (1e-5, 1e-3, 1e-1, 3.0)}}),
        ),
        Fix(
            "clear-before-backward",
            "Clear the gradients at the top of each step, before the backward pass, not between "
            "the backward pass and the optimizer's step.",
            Change(set={"zero_grad": "before-backward"}),
        ),
        Fix(
            "optimize-the-model",
            "Build the optimizer on the model's own parameters, after any copy is taken.",
            Change(set={"optimizer_holds": "the-model"}),
        ),
        Fix(
            "switch-to-adam",
            "Switch the optimizer to Adam, whose steps do not depend on the gradient's size.",
            Change(set={"optimizer": "adam"}),
        ),
        Fix(
            "more-steps",
            "Run every rate for three times as many steps.",
            Change(),  # the sweep's length is fixed: a plausible change that alters nothing
        ),
    ),
    charts=(
        ShownChart("Training loss at each rate", "loss (MSE)", {"loss@*": "loss"}, log_y=True),
    ),
    nuisance={"optimizer": ("sgd", "adam")},
    symptom_observations=("initial_loss", "target_variance"),
)

CASES = (
    Case(
        "a-sweep-before-a-long-run",
        "A sweep before a long run",
        "Before a longer run you swept learning rates from 1e-6 to 1, a factor of 100 apart, for "
        "a small tanh regression network, 150 full-batch steps each from the same starting "
        "weights. Not one curve leaves the starting loss: find out why before you choose a rate.",
        CASE_SET,
        causes=("gradients-cleared-before-step", "optimizer-on-a-copy"),
        retired=("all-rates-too-small", "nothing-wrong"),
    ),
)

# No longer offered (attempts stored under it still open, score and reveal). Its causes are
# rates chosen badly, and a sweep's legend names its rates: (3, 10) and (1e-5, 3) differ on
# sight, so the symptom decided every draw. No look-alike can share a legend with either: the
# same rates in a sound loop give the same run, and a broken loop at those rates, once fixed,
# still picks no rate, so its fix could never heal.
RETIRED_CASES = (
    Case(
        "a-quick-sweep",
        "A sweep with no rate to use",
        "A quick sweep of a few learning rates for a small tanh regression network, 150 full-batch"
        " steps each from the same starting weights, leaves you without a rate you would use.",
        CASE_SET,
        causes=("all-rates-too-large", "rates-too-far-apart"),
    ),
)
