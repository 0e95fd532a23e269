"""The loss-spikes fix judged on learner files kept as fixtures
(tests/exercises/fixtures/loss_spikes_wrong_labels/), on seeds 0-4: right loops written
differently from the reference pass every check and read "clean", and each plausible wrong fix
(the tempting ones: a smaller rate, clipping, skipping high-loss steps, dropping the drill's
batch) fails the checks its mistake breaks, with the reason in its message. Then the judge's own
pieces: the hidden data, the per-example gradients, and loops it must refuse to read."""

import math

import pytest
import torch
import torch.nn.functional as F
from torch.func import functional_call, grad, vmap

from drills.catalog.loss_spikes.exercises.wrong_labels.problem import (
    CONFIG,
    WRONG_ROWS,
    build,
)
from drills.catalog.loss_spikes.exercises.wrong_labels.reading import Measure, flat
from drills.catalog.loss_spikes.setup import MLP
from drills.exercises.judge import hidden_seeds
from drills.exercises.registry import get_exercise
from tests.exercises.judging import (
    SEEDS,
    LearnerFiles,
    failing_checks,
    judgement,
    numbers,
    signed,
    solution,
    starter,
)

SLUG = "loss-spikes-wrong-labels"
FILES = LearnerFiles(SLUG, "loss_spikes_wrong_labels")
RIGHT = FILES.right
RUNS = ("run A", "run B")
MISSES = {"wrong-labels-out", "no-recurring-spike", "learns"}  # what keeping the data costs

# Wrong file: (the checks it fails on every seed, those it may fail besides, the check that
# names the mistake and what its message says, the drill's verdict on run A).
WRONG = {
    # Steps five times smaller: the jump still comes back at the same place in 5-6 epochs of 8.
    "wrong_lower_rate": (
        MISSES,
        set(),
        "no-recurring-spike",
        "at a learning rate of 0.1",
        "bad-batch",
    ),
    # The spike steps cut to 23-28% of what their gradient asked for; the jump stays (3-8 of 8).
    "wrong_clip_gradient": (
        MISSES,
        set(),
        "no-recurring-spike",
        "clipping shrinks",
        "bad-batch-contained",
    ),
    # Run A (9-12 wrong labels): the batch's loss is above 2 from its first visit, so it is
    # skipped every epoch with its 3-5 right labels, and its jump is still measured every
    # epoch. Run B (4-6): its loss stays under 2, so the loop trains on them all (seed 4:
    # skipped from epoch 2 on, 8 right labels with it).
    "wrong_skip_high_loss": (
        {"wrong-labels-out", "no-recurring-spike"},
        {"right-labels-kept", "learns"},
        "no-recurring-spike",
        "skips the step there",
        "bad-batch-contained",
    ),
    # The hidden wrong labels never sit at place 6: they stay, and 14-16 right ones go.
    "wrong_drop_batch_6": (
        MISSES | {"right-labels-kept"},
        set(),
        "right-labels-kept",
        "were left out of training",
        "bad-batch",
    ),
    # No feature is out of range: nothing is left out, exactly the starter's run.
    "wrong_feature_range": (MISSES, set(), "wrong-labels-out", "whose label is wrong", "bad-batch"),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_loop_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict == "clean"
    for run in RUNS:
        assert numbers(found)[f"wrong labels trained on ({run})"] == 0
        assert numbers(found)[f"right labels left out ({run})"] <= 2  # of 140-146
        assert numbers(found)[f"loss on the correct labels ({run})"] < 0.007


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_fix_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    breaks, maybe, key, says, verdict = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert breaks <= FILES.failing(name, seed) <= breaks | maybe
    named = next(check for check in found.checks if check.key == key)
    assert says in named.message, named.message
    assert found.verdict == verdict


# -- the bands the thresholds were set from (drills/.../wrong_labels/checks.py) ----------------


@pytest.mark.parametrize("seed", SEEDS)
def test_the_starter_and_the_solution_bands(seed: int) -> None:
    broken, fixed = starter(SLUG, seed), solution(SLUG, seed)
    # Of 8 epochs: 7-8 with 9-12 wrong labels, 2-7 with 4-6 (one run is enough to fail).
    assert numbers(broken)["spikes at one place (run A)"] >= 7
    assert numbers(broken)["spikes at one place (run B)"] >= 2
    for run in RUNS:
        assert 0.04 < numbers(broken)[f"loss on the correct labels ({run})"] < 0.35
        assert numbers(fixed)[f"spikes at one place ({run})"] <= 1  # a stray blip at most
        assert numbers(fixed)[f"loss on the correct labels ({run})"] < 0.004
    # The drill's reading of the starter's run A: one batch, replayed, stands out at every epoch.
    assert signed(broken)["spike_update_share"] == pytest.approx(1.0, rel=1e-4)
    assert signed(broken)["replay_suspect_loss"] > 3 * signed(broken)["replay_normal_loss"]
    assert signed(fixed)["spike_count"] <= 1


# -- the judge's own pieces --------------------------------------------------------------------


def test_the_hidden_wrong_labels_are_never_where_the_drill_put_them() -> None:
    exercise = get_exercise(SLUG)
    for seed in range(40):
        for case, hidden in enumerate(hidden_seeds(exercise, seed)):
            problem = build(case, hidden)
            wrong = problem.wrong.view(CONFIG.batches, -1)
            low, high = WRONG_ROWS[case]
            assert wrong.any(dim=1).nonzero().flatten().tolist() == [problem.place]
            assert problem.place != CONFIG.bad_position
            assert low <= int(wrong.sum()) <= high
            assert bool(problem.clear[problem.wrong].all())  # each one contradicts its features


def test_the_gradients_written_out_are_autograds() -> None:
    problem = build(0, 7)
    initial = dict(problem.model.state_dict())
    measure = Measure(problem, initial)
    weights = flat(initial, initial) + 0.1 * torch.randn(len(flat(initial, initial)))
    rows = torch.arange(40, 60)
    losses, grads = measure.examples(weights, rows)

    model = MLP(CONFIG).double()
    params = dict(zip(initial, measure.layers(weights), strict=True))

    def loss_of(p: dict[str, torch.Tensor], x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return F.cross_entropy(functional_call(model, p, (x[None],)), y[None])

    x, y = measure.inputs[rows], measure.given[rows]
    found = vmap(grad(loss_of), in_dims=(None, 0, 0))(params, x, y)
    assert torch.allclose(grads, torch.cat([found[n].flatten(1) for n in initial], dim=1))
    with torch.no_grad():
        reference = F.cross_entropy(functional_call(model, params, (x,)), y, reduction="none")
    assert torch.allclose(losses, reference)


def edit(name: str, old: str, new: str) -> str:
    code = FILES.code(name)
    assert old in code
    return code.replace(old, new)


SGD = "torch.optim.SGD(model.parameters(), lr=LR)"
UNREADABLE = {
    # Momentum carries the last step's direction into this one.
    "momentum": (SGD, "torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)", "plain SGD"),
    "adam": (SGD, "torch.optim.Adam(model.parameters(), lr=0.01)", "plain SGD"),
    # The examples the class medians flag given the class they look like, not left out.
    "relabelled": (
        "keep = (nearest == given).view(labels.shape)",
        "keep = torch.ones_like(labels, dtype=torch.bool)\n    labels = nearest.view(labels.shape)",
        "labels as given",
    ),
    # Standardised features are not the examples the judge handed over.
    "rescaled": (
        "every, given = inputs.flatten(0, 1), labels.flatten()",
        "inputs = (inputs - inputs.mean()) / inputs.std()\n"
        "    every, given = inputs.flatten(0, 1), labels.flatten()",
        "not examples of the data as given",
    ),
}


@pytest.mark.parametrize("variant", sorted(UNREADABLE))
def test_a_loop_the_judge_cannot_read_passes_nothing_that_needs_reading(variant: str) -> None:
    old, new, says = UNREADABLE[variant]
    found = judgement(SLUG, edit("right_class_medians", old, new), 0)
    readable = next(check for check in found.checks if check.key == "steps-readable")
    assert readable.status == "fail" and says in readable.message, readable.message
    assert {"wrong-labels-out", "right-labels-kept", "no-recurring-spike"} <= failing_checks(found)
    assert found.verdict is None


def test_a_loop_that_hides_from_the_recorder_and_claims_success_fails() -> None:
    code = edit(
        "right_class_medians",
        "    every, given = inputs.flatten(0, 1), labels.flatten()",
        '    print("PASS: no spikes")\n'
        "    model.get_submodule('net.0')._forward_pre_hooks.clear()\n"
        "    every, given = inputs.flatten(0, 1), labels.flatten()",
    )
    found = judgement(SLUG, code, 0)
    readable = next(check for check in found.checks if check.key == "steps-readable")
    assert readable.status == "fail" and "never ran the model" in readable.message
    assert found.status == "failed"


def test_a_probe_on_the_model_itself_is_forgotten_once_its_weights_are_put_back() -> None:
    # right_replay_on_the_model trains the judged model twice, on every batch, wrong labels
    # included, before it puts the initial weights back: only the last run is judged.
    found = FILES.judged("right_replay_on_the_model", 0)
    assert signed(found)["steps_run"] == CONFIG.steps
    assert math.isclose(signed(found)["normal_update_share"], 1.0, rel_tol=1e-4)
