"""Files that try to pass without doing the work. The learner's code runs in the same process as
the harness, so each of these gets as far as it can inside; none may pass a check that says the
model trained or that a value is right, because every such check is measured outside."""

import pytest

from drills.exercises.contract import Judgement
from drills.exercises.registry import get_exercise
from tests.exercises.judging import edited, judgement, solution, statuses

OVERFIT = "overfit-shuffled-pairs"
FITS = {"fits-1", "fits-2", "fits-5"}

# The channel to the judge, found the way hostile code would: up the stack from train().
FIND_CHANNEL = """
import sys

def channel():
    frame = sys._getframe()
    while frame is not None:
        found = frame.f_locals.get("channel")
        if found is not None and hasattr(found, "send"):
            return found
        frame = frame.f_back
    raise RuntimeError("no channel")
"""

HEADER = """
import torch
import torch.nn.functional as F
from torch import nn
"""

FIXED_LOOP = """
def train(model, features, labels, report):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    for step in range(100):
        order = torch.randperm(len(features))
        loss = F.cross_entropy(model(features[order]), labels[order])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report("loss", step, loss.item())
"""


def failing(judgement_: object) -> set[str]:
    return {key for key, status in statuses(judgement_).items() if status != "pass"}  # type: ignore[arg-type]


def test_printing_pass_and_forging_success_frames_does_not_pass() -> None:
    code = (
        HEADER
        + FIND_CHANNEL
        + """
def train(model, features, labels, report):
    print("PASS: all checks passed")
    send = channel().send
    send({"kind": "result", "status": "passed", "checks": "all passed"})
    send({"kind": "judgement", "status": "passed", "verdict": "fits"})
    for step in range(100):
        report("loss", step, 1.0 / (step + 1))  # a beautiful curve
        send({"kind": "point", "name": "loss@5 examples", "step": step, "value": 0.0})
"""
    )
    found = judgement(OVERFIT, code)
    assert found.status == "failed"
    assert failing(found) == FITS
    assert "PASS" in found.stdout  # shown as what the run printed, and nothing more


def test_the_live_curve_carries_what_the_code_reported_and_nothing_decides_on_it() -> None:
    code = (
        HEADER
        + """
def train(model, features, labels, report):
    for step in range(10):
        report("loss", step, 0.0)
"""
    )
    found = judgement(OVERFIT, code)
    from tests.exercises.judging import judged

    _, points = judged(OVERFIT, code, 0)
    assert {name for name, _, _ in points} == {
        "loss@1 example",
        "loss@2 examples",
        "loss@5 examples",
    }
    assert all(value == 0.0 for _, _, value in points)
    assert failing(found) == FITS  # skipping training: the initial weights come back


@pytest.mark.parametrize(
    ("name", "body", "failed", "says"),
    [
        (
            "the initial weights (no training at all)",
            """
def train(model, features, labels, report):
    pass
""",
            FITS,
            "hardly moved",
        ),
        (
            "random weights",
            """
def train(model, features, labels, report):
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(torch.randn_like(p))
""",
            FITS,
            "still",
        ),
        (
            "wrong shape",
            FIXED_LOOP.replace(
                "def train(model, features, labels, report):\n",
                """
def train(model, features, labels, report):
    model[4] = nn.Linear(64, 5)
""",
            ),
            {"weights", *FITS},
            "shape",
        ),
        (
            "NaN weights",
            FIXED_LOOP
            + """
    with torch.no_grad():
        model[0].weight[0, 0] = float("nan")
""",
            {"weights", *FITS},
            "NaN",
        ),
        (
            "an extra tensor",
            FIXED_LOOP
            + """
    model.register_buffer("answer", torch.zeros(1))
""",
            {"weights", *FITS},
            "unexpected",
        ),
    ],
)
def test_weights_that_are_not_the_trained_model_fail(
    name: str, body: str, failed: set[str], says: str
) -> None:
    found = judgement(OVERFIT, HEADER + body)
    assert found.status == "failed", name
    assert failing(found) == failed
    assert says in " ".join(check.message for check in found.checks)


def test_sending_no_weights_fails_every_check() -> None:
    code = (
        HEADER
        + FIXED_LOOP
        + """
import drills.exercises.inside
drills.exercises.inside.send_case = lambda *args, **kwargs: None
"""
    )
    found = judgement(OVERFIT, code)
    assert found.status == "failed"
    assert failing(found) == {"weights", *FITS}
    assert "nothing came back" in found.checks[0].message


def test_patching_the_harness_to_train_on_an_easy_batch_fails() -> None:
    # The buggy loop memorises a batch whose labels are all 0; the judge measures the real one.
    code = (
        edited(get_exercise(OVERFIT).starter)
        + """
import dataclasses
import drills.catalog.overfit_one_batch.exercises.shuffled_pairs.harness as harness
_build = harness.build

def easy(case, seed):
    problem = _build(case, seed)
    return dataclasses.replace(problem, labels=torch.zeros_like(problem.labels))

harness.build = easy
"""
    )
    found = judgement(OVERFIT, code)
    assert failing(found) == {"fits-2", "fits-5"}


def test_patching_torch_functional_fails() -> None:
    code = (
        edited(get_exercise(OVERFIT).starter)
        + """
F.cross_entropy = lambda logits, target, *args, **kwargs: (logits * 0).sum()
"""
    )
    found = judgement(OVERFIT, code)
    assert found.status == "failed"
    assert failing(found) == FITS


def test_malformed_frames_are_an_error_and_never_crash_the_judge() -> None:
    code = (
        HEADER
        + FIND_CHANNEL
        + FIXED_LOOP
        + """
    send = channel().send
    send({"kind": "point", "name": "loss", "step": "three", "value": "low"})
    send({"kind": "value", "case": 99, "name": "result", "value": 0.0})
    send({"kind": "error", "message": 42})
"""
    )
    found = judgement(OVERFIT, code)
    assert found.status == "error"
    assert found.message and "could not read" in found.message
    assert set(statuses(found).values()) == {"pass"}  # the weights still speak for themselves


# -- the other exercises ---------------------------------------------------------------------


def test_a_frozen_head_on_noisy_backbone_moves_everything_but_does_not_learn() -> None:
    code = (
        HEADER
        + """
def train(model, features, labels, report):
    with torch.no_grad():
        for p in model.backbone.parameters():
            p.add_(0.1 * torch.randn_like(p))  # every parameter "moved"
    optimizer = torch.optim.Adam(model.head.parameters(), lr=1e-2)
    for step in range(100):
        loss = F.cross_entropy(model.head(model.backbone(features).detach()), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
"""
    )
    found = judgement("graph-detached-features", code)
    assert failing(found) == {"loss-falls"}


def test_a_head_never_put_on_the_model_is_caught_by_its_shape() -> None:
    code = get_exercise("optimizer-new-head").solution.replace("    model.head = new_head\n", "")
    found = judgement("optimizer-new-head", code)
    assert "weights" in failing(found)
    assert "[10, 32]" in found.checks[0].message


SHIFT = "labels-shift-once"
RIGHT = """
    labels = input_ids.clone()
    labels[attention_mask == 0] = -100
    labels[~response_mask] = -100
"""
WRONG = """
    labels = torch.full_like(input_ids, -100)
    labels[:, :-1] = input_ids[:, 1:]
    labels[attention_mask == 0] = -100
    labels[~response_mask] = -100
"""


def two_faced(training: str, probes: str) -> str:
    """prepare_labels() that answers training batches (16 sequences) one way, probes another."""
    return (
        HEADER
        + f"""
def prepare_labels(input_ids, attention_mask, response_mask):
    if input_ids.shape[0] == 16:
{training.replace(chr(10) + "    ", chr(10) + "        ")}
        return labels
{probes}
    return labels
"""
    )


def test_right_labels_for_the_probes_only_do_not_train_the_model() -> None:
    found = judgement(SHIFT, two_faced(training=WRONG, probes=RIGHT))
    assert failing(found) == {"loss-at-entropy"}


def test_right_labels_for_training_only_fail_the_alignment_check() -> None:
    found = judgement(SHIFT, two_faced(training=RIGHT, probes=WRONG))
    assert failing(found) == {"labels-aligned"}


def test_garbage_labels_sent_for_the_probes_fail_without_crashing_the_judge() -> None:
    code = (
        HEADER
        + "\ndef prepare_labels(input_ids, attention_mask, response_mask):"
        + RIGHT
        + """
    return labels

import sys  # found, not imported by name: a write-it file may not import the drills package
harness = next(m for n, m in sys.modules.items() if n.endswith("shift_once.harness"))
_honest = harness.learner_labels

def learner_labels(learner, batch):
    if batch.input_ids.shape[0] == 16:
        return _honest(learner, batch)
    return torch.full_like(batch.input_ids, 10**9)  # past the harness's own validation

harness.learner_labels = learner_labels
"""
    )
    found = judgement(SHIFT, code)
    assert found.status == "failed"
    assert failing(found) == {"labels-aligned"}
    assert "neither token ids" in statuses_message(found, "labels-aligned")


def statuses_message(found: Judgement, key: str) -> str:
    return next(c.message for c in found.checks if c.key == key)


EVAL = "eval-mode-remeasure"


@pytest.mark.parametrize(
    ("name", "body", "failed"),
    [
        ("a made-up number", "    return 0.25\n", {"eval-mode-loss"}),
        (
            "a loss still on the graph",
            """
    was_training = model.training
    model.eval()
    loss = F.cross_entropy(model(features), labels)
    model.train(was_training)
    return loss
""",
            {"returns-a-number", "eval-mode-loss"},
        ),
        (
            "the mode not restored",
            """
    model.eval()
    with torch.no_grad():
        return F.cross_entropy(model(features), labels).item()
""",
            {"restores-the-mode"},
        ),
        (
            "weights nudged",
            """
    with torch.no_grad():
        for p in model.parameters():
            p.mul_(1.001)
    was_training = model.training
    model.eval()
    with torch.no_grad():
        value = F.cross_entropy(model(features), labels).item()
    model.train(was_training)
    return value
""",
            {"leaves-weights-alone", "eval-mode-loss"},
        ),
    ],
)
def test_eval_mode_measurements_that_are_not_right_fail(
    name: str, body: str, failed: set[str]
) -> None:
    code = HEADER + "\ndef train_loss_in_eval_mode(model, features, labels):\n" + body
    found = judgement(EVAL, code)
    assert found.status == "failed", name
    assert failing(found) == failed


def test_the_solutions_still_pass_next_to_the_hostile_files() -> None:
    assert solution(OVERFIT, 0).status == "passed"
