"""The exercise catalogue: found in the drill folders, complete, and cheap to list (no torch)."""

import ast
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from drills.core.registry import get_drill
from drills.exercises.contract import CheckSpec, Exercise
from drills.exercises.registry import UnknownExercise, all_exercises, get_exercise
from drills.exercises.tensors import check_against, load_tensors, save_tensors
from drills.exercises.transport import MAX_FRAMES, read_frames

ROOT = Path(__file__).resolve().parents[2]
EXERCISES = all_exercises()


def test_the_exercises_are_found_in_their_drill_folders() -> None:
    assert {(e.drill, e.slug, e.kind) for e in EXERCISES} == {
        ("overfit-one-batch", "overfit-shuffled-pairs", "fix"),
        ("overfit-one-batch", "static-batch-seeded-overfit", "write"),
        ("overfit-one-batch", "overfit-ladder", "write"),
        ("break-the-graph", "graph-detached-features", "fix"),
        ("break-the-graph", "pipeline-test", "write"),
        ("double-shift-labels", "labels-shift-once", "write"),
        ("double-shift-labels", "label-audit", "write"),
        ("val-below-train", "eval-mode-remeasure", "write"),
        ("optimizer-membership", "optimizer-new-head", "fix"),
        ("optimizer-membership", "relative-update", "write"),
        ("silent-no-learning", "parameter-audit", "write"),
        ("gradient-accumulation", "accumulation-big-batch-step", "fix"),
        ("mixed-precision", "mixed-precision-float32-step", "fix"),
        ("variable-length-loss", "per-token-loss", "fix"),
        ("variable-length-loss", "write-it-twice", "write"),
        ("eval-pipeline-mismatch", "evaluation-encodes-like-training", "fix"),
        ("batch-noise", "batch-noise-spike", "write"),
        ("group-leakage", "group-leakage-honest-split", "fix"),
        ("nan-hunt", "nan-hunt-confident-logits", "fix"),
        ("nan-hunt", "first-non-finite", "write"),
        ("padding-masks", "padding-both-masks", "fix"),
        ("loss-spikes", "loss-spikes-wrong-labels", "fix"),
        ("lr-sweep", "lr-sweep-choose-rate", "fix"),
        ("init-check", "init-check-sound-start", "fix"),
        ("gradient-check", "gradient-check-smooth-l1-backward", "fix"),
        ("loss-vs-metric", "loss-vs-metric-rare-class", "fix"),
        ("overfitting-leakage", "overfitting-honest-early-stop", "fix"),
        ("silent-no-learning", "silent-no-learning-gradient-panel", "fix"),
    }
    with pytest.raises(UnknownExercise, match="known: "):
        get_exercise("no-such-exercise")


def test_listing_exercises_imports_no_torch() -> None:
    code = (
        "import sys; from drills.exercises.registry import all_exercises; "
        "from drills.exercises.judge import same_as_starter; "
        "[e.story + e.starter for e in all_exercises()]; print('torch' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    )
    assert result.stdout.strip() == "False"


def defined_functions(code: str) -> set[str]:
    """The functions and classes a file defines at its top level (a class the harness builds
    a model from is provided as a function is)."""
    kinds = (ast.FunctionDef, ast.ClassDef)
    return {node.name for node in ast.parse(code).body if isinstance(node, kinds)}


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.slug)
def test_each_exercise_is_complete(exercise: Exercise) -> None:
    drill = get_drill(exercise.drill)
    assert exercise.story.strip() and exercise.title
    assert len(exercise.hints) >= 2
    assert exercise.solution not in exercise.hints
    for code in (exercise.starter, exercise.solution):
        assert set(exercise.provides) <= defined_functions(code)
        assert "drills" not in code  # self-contained: the learner can run it anywhere
        assert 30 <= len(code.splitlines()) <= 75
    assert exercise.starter != exercise.solution
    assert exercise.checks[0] == CheckSpec(exercise.checks[0].key, exercise.checks[0].title)
    assert drill.slug == exercise.drill and drill.healthy


@pytest.mark.parametrize("exercise", EXERCISES, ids=lambda e: e.slug)
def test_each_story_leaves_the_cause_unnamed(exercise: Exercise) -> None:
    story = exercise.story.lower()
    giveaways = {
        "overfit-shuffled-pairs": ("permut", "randperm", "pairs"),
        "graph-detached-features": ("detach", "grad_fn", "graph"),
        "pipeline-test": (
            "requires_grad",
            ".grad",
            "is none",
            "zero",
            "count_nonzero",
            "named_parameters",
            "threshold",
        ),
        "labels-shift-once": ("double", "twice", "shift"),
        "eval-mode-remeasure": ("eval()", "dropout is still", "train mode"),
        "optimizer-new-head": ("optimizer", "param_groups"),
        "parameter-audit": ("param_groups", "isfinite", "is none", "identity"),
        "overfit-ladder": ("zero_grad", "no_grad", "eval()", "random batch", "fresh batch"),
        "static-batch-seeded-overfit": (
            "clone",
            "copy",
            "in place",
            "reference",
            "manual_seed",
            "seed once",
            "inside the loop",
            "identity",
            "dropout",
        ),
        "relative-update": ("clone", "in place", "before the step"),
        "label-audit": ("t + 1", "t + shift", "shifted once"),
        "accumulation-big-batch-step": ("divid", "/ k", "sum", "mean", "averag", "scale"),
        "mixed-precision-float32-step": ("unscale", "times the scale", "before clip", "order"),
        "per-token-loss": ("divid", "sum", "per sequence", "len(", "number of sequences"),
        "write-it-twice": (
            "clamp",
            "torch.where",
            "masked_fill",
            "0 / 0",
            "padded length",
            "allclose",
            "shape",
            "dtype",
            "tolerance",
            "average of",
        ),
        "evaluation-encodes-like-training": ("<bos>", "start token", "lower", "twice", "unk"),
        "batch-noise-spike": ("topk", "sort", "hardest", "largest", "distinct", "sqrt"),
        "group-leakage-honest-split": ("split by", "group", "near", "cop", "both sides", "leak"),
        "nan-hunt-confident-logits": ("log_softmax", "logsumexp", "underflow", "log(0)", "round"),
        "first-non-finite": ("hook", "register", "named_modules", "isfinite", "grad_input"),
        "padding-both-masks": ("mask", "inf", "ignore", "key", "softmax", "count", "attends to"),
        "loss-spikes-wrong-labels": ("label", "wrong", "corrupt", "left out", "leave out", "drop"),
        "lr-sweep-choose-rate": ("sweep", "too large", "same weights", "deepcopy", "clip", "1.5"),
        "init-check-sound-start": ("fan", "kaiming", "sqrt", "std", "variance", "output layer"),
        "gradient-check-smooth-l1-backward": (
            "the mask",
            "masked out",
            "/ beta",
            "1/beta",
            "forgot",
            "branch",
            "padded steps get",
            "x / beta",
        ),
        "loss-vs-metric-rare-class": (
            "class weight",
            "balanc",
            "sampl",
            "threshold",
            "imbalanc",
            "recall",
            "bias",
            "inverse",
        ),
        "overfitting-honest-early-stop": (
            "cop",
            "duplicate",
            "duplication",
            "leak",
            "overfit",
            "memoris",
            "early stop",
            "patience",
            "checkpoint",
            "minimum",
        ),
        "silent-no-learning-gradient-panel": (
            "zero_grad",
            "clear",
            "= none",
            "set_to_none",
            "accumulat",
            "before the step",
            "after the step",
        ),
    }[exercise.slug]
    assert not [word for word in giveaways if word in story]


def test_tensors_cross_as_safetensors_and_are_checked_against_the_layout() -> None:
    reference = {"w": torch.zeros(2, 3), "b": torch.zeros(3), "n": torch.tensor([1, 2])}
    sent = {"w": torch.randn(2, 3), "b": torch.randn(3), "n": torch.tensor([3, 4])}
    back = load_tensors(save_tensors(sent))
    assert all(torch.equal(back[k], sent[k]) for k in sent)
    assert check_against(back, reference) is None
    assert "missing b" in (check_against({"w": sent["w"], "n": sent["n"]}, reference) or "")
    assert "shape" in (check_against({**back, "w": torch.zeros(3, 2)}, reference) or "")
    assert "float64" in (check_against({**back, "b": torch.zeros(3).double()}, reference) or "")
    nan = torch.zeros(3)
    nan[1] = float("inf")
    assert "NaN or infinite" in (check_against({**back, "b": nan}, reference) or "")


def test_frames_are_bounded() -> None:
    point = {"kind": "point", "name": "loss@run A", "step": 0, "value": 1.0}
    read = read_frames([point] * (MAX_FRAMES + 10), cases=2)
    assert len(read.points) == MAX_FRAMES
    assert read.problems and "only" in read.problems[0]
