"""The write-it exercise first-non-finite (Hunt the NaN) judged on learner files kept as
fixtures (tests/exercises/fixtures/first_non_finite/): two correct files written differently
from the reference pass every check, and each plausible wrong file fails exactly the checks its
mistake breaks, with a message in the learner's terms. The judge's truth (it runs the model
itself) is checked against the fault each hidden run planted, over many seeds; hooks left
behind, a weight changed and a broken answer format are each caught."""

from pathlib import Path

import pytest
import torch

from drills.catalog.nan_hunt.exercises.first_non_finite import checks, problem
from drills.exercises.registry import get_exercise
from tests.exercises.judging import failing_checks, judgement

SLUG = "first-non-finite"
FIXTURES = Path(__file__).parent / "fixtures" / "first_non_finite"

# Wrong file: the checks it fails (every other passes) and what the first of them says.
WRONG: dict[str, tuple[set[str], str]] = {
    # The parent containers hold the same NaN after the module that made it: the last is one.
    "wrong_last_module": (
        {"forward", "hidden-forward", "backward"},
        "that is not the first: the output of",
    ),
    "wrong_final_output_only": (
        {"forward", "hidden-forward"},
        "In case 'a fault hidden downstream' your finder returned None",
    ),
    "wrong_forward_only": (
        {"backward"},
        "In case 'NaN only in the backward' your finder returned None; the gradient that the "
        "backward of",
    ),
    "wrong_parameter_grads": ({"backward"}, "that is not the first: the gradient that"),
    "wrong_hooks_left": ({"hooks-removed"}, "hook(s) were still registered on the model itself"),
    "wrong_class_names": (
        {"names"},
        "your finder named 'Linear', which is not a name model.named_modules() gives",
    ),
    "wrong_skips_loss": (
        {"loss"},
        "In case 'a loss that overflows' your finder returned ('backward', 'head'); every "
        "module's output was finite and the loss was not",
    ),
}
SEEDS = range(25)


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.py").read_text()


def reference() -> str:
    return get_exercise(SLUG).solution


def edited(code: str, old: str, new: str) -> str:
    assert old in code
    return code.replace(old, new)


def test_every_fixture_is_judged_here() -> None:
    kept = {path.stem for path in FIXTURES.glob("*.py")}
    right = {stem for stem in kept if stem.startswith("right_")}
    assert kept == set(WRONG) | right
    assert len(right) >= 2 and len(WRONG) >= 3


@pytest.mark.parametrize("name", sorted(p.stem for p in FIXTURES.glob("right_*.py")))
def test_a_correct_file_written_differently_passes(name: str) -> None:
    found = judgement(SLUG, fixture(name))
    assert found.status == "passed", [check.message for check in found.checks]


@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_file_fails_the_checks_its_mistake_breaks(name: str) -> None:
    failing, says = WRONG[name]
    found = judgement(SLUG, fixture(name))
    assert found.status == "failed", found.message
    assert failing_checks(found) == failing
    messages = [check.message for check in found.checks if check.key in failing]
    assert any(says in message for message in messages), messages
    assert all(message.startswith("In case '") for message in messages)


def test_a_finder_that_always_blames_a_layer_fails_the_healthy_run() -> None:
    code = edited(reference(), "        return None\n", '        return "forward", "head"\n')
    found = judgement(SLUG, code)
    assert failing_checks(found) == {"healthy"}
    healthy = next(check for check in found.checks if check.key == "healthy")
    assert "every output, the loss and every gradient were finite: return None" in healthy.message


def test_a_hook_left_on_a_parameter_is_found() -> None:
    code = edited(
        reference(),
        "    try:\n",
        "    model.get_submodule('head').weight.register_hook(lambda grad: grad)\n    try:\n",
    )
    found = judgement(SLUG, code)
    assert failing_checks(found) == {"hooks-removed"}
    assert "registered on the parameter 'head.weight'" in found.checks[-2].message


def test_a_global_hook_left_behind_is_found() -> None:
    code = edited(fixture("right_global_hooks"), "handle.remove()", "pass")
    found = judgement(SLUG, code)
    assert failing_checks(found) == {"hooks-removed"}
    assert "2 global module hook(s) were still registered" in found.checks[-2].message


def test_a_finder_that_changes_a_weight_fails_leaves_model_alone() -> None:
    """The weights that came back are compared with the ones rebuilt outside, not trusted."""
    code = edited(
        reference(),
        "    try:\n",
        "    with torch.no_grad():\n        model.get_submodule('head').bias.add_(1.0)\n    try:\n",
    )
    found = judgement(SLUG, code)
    assert failing_checks(found) == {"leaves-model-alone"}
    assert "'head.bias' had changed after your finder returned" in found.checks[-1].message


@pytest.mark.parametrize(
    ("returned", "says"),
    [
        ('"forward"', "first_non_finite returned str; return None, or a pair"),
        ('("sideways", "head")', "the stage is 'sideways'; use one of 'forward', 'loss'"),
        ('("loss", "head")', "for the loss stage name no module: return ('loss', None)"),
        ('("forward", 3)', "for the forward stage the module is int; give its name, a str"),
    ],
    ids=["a-string", "no-such-stage", "loss-with-module", "module-not-a-name"],
)
def test_a_file_that_breaks_the_format_is_told_how(returned: str, says: str) -> None:
    code = f"def first_non_finite(model, inputs, loss_fn):\n    return {returned}\n"
    found = judgement(SLUG, code)
    assert found.status == "error"
    assert found.message and says in found.message
    assert {check.status for check in found.checks} == {"error"}


# -- the hidden problem and the judge's truth -------------------------------------------------


def test_each_problem_has_a_fault_per_hidden_run() -> None:
    exercise = get_exercise(SLUG)
    assert len(problem.FAULTS) == len(exercise.cases)
    assert set(checks.CHECK_OF) == set(problem.FAULTS)
    assert set(checks.CHECK_OF.values()) == set(checks.ANSWER_CHECKS)
    assert {spec.key for spec in exercise.checks} >= set(checks.ANSWER_CHECKS)


@pytest.mark.parametrize("fault", problem.FAULTS)
def test_the_judges_truth_finds_the_planted_fault(fault: str) -> None:
    """Measured by running the model, the first non-finite value is where the fault was
    planted, on every seed; the seeds move it between depths."""
    places = set()
    for seed in SEEDS:
        built = problem.build(fault, seed)
        assert checks.measure(built).first == built.expected
        places.add(built.expected)
    depths = {"healthy": 1, "inf-weight": 4, "divide-zero": 3, "hidden": 1, "loss": 1}
    assert len(places) == depths.get(fault, 2)


@pytest.mark.parametrize("seed", range(5))
def test_the_hidden_fault_is_gone_from_the_final_output(seed: int) -> None:
    """What makes it hidden: the model's output, the loss and every gradient are finite, so
    only a finder that watches each module's output sees it."""
    built = problem.build("hidden", seed)
    trace = checks.measure(built)
    # The log's output, and its container's (the same tensor); the encoder's is clean again.
    assert trace.forward == ["encoder.layers.3", "encoder.layers"]
    assert trace.loss_finite
    output = built.model(built.inputs)
    assert bool(torch.isfinite(output).all())
    loss = built.loss_fn(output)
    loss.backward()  # type: ignore[no-untyped-call]
    grads = [p.grad for p in built.model.parameters()]
    assert all(grad is not None and bool(torch.isfinite(grad).all()) for grad in grads)


@pytest.mark.parametrize("seed", range(5))
def test_the_backward_fault_is_finite_until_the_backward(seed: int) -> None:
    built = problem.build("backward", seed)
    trace = checks.measure(built)
    assert trace.forward == [] and trace.loss_finite
    # It starts at the gate and runs on toward the input: every module before it is hit too.
    assert built.expected is not None and trace.backward[0] == built.expected[1]
    assert "encoder.layers.0" in trace.backward


def test_the_loss_function_leads_nowhere_but_the_targets() -> None:
    """The learner's code gets the loss function: nothing it holds may lead to the answer."""
    built = problem.build("backward", 0)
    loss_fn = built.loss_fn
    cells = [cell.cell_contents for cell in loss_fn.__closure__ or ()]
    assert len(cells) == 1 and cells[0] is built.targets


def test_an_infinite_weight_crosses_as_a_finite_copy_and_exactly_as_a_value() -> None:
    built = problem.build("inf-weight", 0)
    state = built.model.state_dict()
    copy = problem.finite_copy(state)
    assert any(not bool(torch.isfinite(t).all()) for t in state.values())
    assert all(bool(torch.isfinite(t).all()) for t in copy.values())
    assert checks.reference_weights(1, 0).keys() == state.keys()


def test_the_answer_messages_say_what_is_wrong() -> None:
    """Each kind of wrong answer, read against a traced run, in the learner's terms."""
    built = problem.build("backward", 0)
    trace = checks.measure(built)
    modules = dict(built.model.named_modules())
    assert built.expected is not None
    gate = built.expected[1]
    assert gate is not None
    assert checks.answer_problem(("backward", gate), trace, modules) is None
    assert checks.answer_problem(("backward", "RootGate"), trace, modules) is None  # a class
    assert checks.name_problem(("backward", "RootGate"), modules) == (
        "your finder named 'RootGate', which is not a name model.named_modules() gives (it is "
        f"a class: named_modules() calls a module of it {gate!r})"
    )
    said = {
        ("forward", "head"): "every module's output was finite, and the gradient that",
        ("loss", None): "but the loss is not where it starts",
        ("backward", "encoder.layers.0"): "that is not the first",
        ("backward", "head"): "the gradient that the backward of 'head' sends toward its input "
        "was finite",
        ("backward", "Linear"): "'Linear' is no module of this model",
    }
    for answer, says in said.items():
        assert says in (checks.answer_problem(answer, trace, modules) or ""), answer
