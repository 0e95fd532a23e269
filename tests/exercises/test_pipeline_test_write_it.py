"""The pipeline test (break-the-graph's write-it exercise) judged on learner files kept as
fixtures (tests/exercises/fixtures/pipeline_test/), on seeds 0-4: two correct tests written
differently from the reference pass every check, and each plausible wrong test fails exactly the
checks its mistake breaks, with a message in the learner's terms. Then the hidden models
themselves, read by the judge's own backward over many seeds, and what the judge does with a
test that ends in something other than a pass or a failed assert."""

import json
from pathlib import Path

import pytest
import torch

from drills.catalog.break_the_graph.exercises.pipeline_test.checks import (
    CHECK_OF,
    silent_parameters,
)
from drills.catalog.break_the_graph.exercises.pipeline_test.problem import (
    FAULTS,
    LAYER_SCALE,
    build_batch,
    build_model,
    loss_of,
    setup,
)
from drills.cli import main
from drills.exercises.registry import get_exercise
from tests.exercises.judging import SEEDS, LearnerFiles, failing_checks, judgement, numbers

SLUG = "pipeline-test"
FILES = LearnerFiles(SLUG, "pipeline_test")
RIGHT = FILES.right
BROKEN = {"cut-off", "frozen", "times-zero", "unused", "dead-relus"}

# Wrong file: the checks it fails on every seed (every other passes), and what the first says.
WRONG = {
    # A gradient of zeros is not None: the zeroed output and the dead ReLUs pass.
    "wrong_grad_not_none": ({"times-zero", "dead-relus"}, "(its gradient is all zeros)"),
    # Every fault sits below the head, which keeps learning.
    "wrong_last_layer_only": (BROKEN, "finds parameters that would not learn"),
    # The head alone takes the loss down in one step.
    "wrong_loss_decreases": (BROKEN, "finds parameters that would not learn"),
    # The branch behind a layer scale of 1e-4 has gradient norms of about 1e-6 to 1e-5.
    "wrong_strict_threshold": ({"small-gradients"}, "none of them is all zeros"),
    # A frozen layer is skipped, not reported.
    "wrong_trainable_only": ({"frozen"}, "(requires_grad is False)"),
}


def test_every_fixture_is_judged_here() -> None:
    assert FILES.kept() == set(WRONG) | set(RIGHT)
    assert len(RIGHT) >= 2 and len(WRONG) >= 3


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", RIGHT)
def test_a_right_test_written_differently_passes(name: str, seed: int) -> None:
    found = FILES.judged(name, seed)
    assert found.status == "passed", [check.message for check in found.checks]
    assert found.verdict is None  # one backward, no training run: no drill reading


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("name", sorted(WRONG))
def test_a_wrong_test_fails_the_checks_its_mistake_breaks(name: str, seed: int) -> None:
    failing, says = WRONG[name]
    found = FILES.judged(name, seed)
    assert found.status == "failed", found.message
    assert FILES.failing(name, seed) == failing
    messages = [check.message for check in found.checks if check.key in failing]
    assert all(message.startswith("In case '") for message in messages), messages
    assert all(says in message for message in messages), messages


# -- the hidden models, read by the judge's own backward ---------------------------------------

MANY = range(40)


@pytest.mark.parametrize("case", range(len(FAULTS)))
def test_a_healthy_model_learns_everywhere_and_a_broken_one_does_not(case: int) -> None:
    fault = FAULTS[case]
    designs = set()
    for seed in MANY:
        silent, _ = silent_parameters(case, seed)
        designs.add(setup(case, seed).design)
        if fault in ("healthy", "small"):
            assert silent == {}, (seed, silent)
        else:
            assert silent, seed
            # The fault sits below the head: the last layer always learns.
            assert not any(name.startswith("head.") for name in silent), (seed, silent)
    # Each fault is met on both designs over the seeds; the healthy runs are one design each.
    assert designs == ({"stack", "tokens"} if fault in BROKEN else {setup(case, 0).design})


def test_the_two_healthy_designs_differ_in_gradient_scale_by_orders_of_magnitude() -> None:
    stack = [silent_parameters(FAULTS.index("healthy"), seed)[1] for seed in MANY]
    tokens = [silent_parameters(FAULTS.index("small"), seed)[1] for seed in MANY]
    # The stack's smallest gradient norm is far above 1e-4; the token model's branch, behind a
    # layer scale of 1e-4, sits between 1e-7 and 1e-4: small, nowhere near float32's zero.
    assert min(stack) > 1e-3, min(stack)
    assert 1e-7 < min(tokens) and max(tokens) < 1e-4, (min(tokens), max(tokens))
    assert LAYER_SCALE == 1e-4


def test_the_model_factory_builds_the_same_model_each_time() -> None:
    for case in range(len(FAULTS)):
        first, second = build_model(case, 3), build_model(case, 3)
        assert first is not second
        for (name, a), (_, b) in zip(
            first.state_dict().items(), second.state_dict().items(), strict=True
        ):
            assert torch.equal(a, b), name


def test_the_loss_falls_on_every_broken_model_so_the_loss_cannot_tell() -> None:
    """The premise of the loss-based wrong test, measured: one SGD step lowers the loss on
    every hidden model, broken or not."""
    for case in range(len(FAULTS)):
        for seed in range(10):
            model = build_model(case, seed)
            inputs, targets = build_batch(case, seed)
            loss = loss_of(case, seed)
            trainable = [p for p in model.parameters() if p.requires_grad]
            optimizer = torch.optim.SGD(trainable, lr=0.05)
            before = loss(model(inputs), targets)
            torch.autograd.backward(before)
            optimizer.step()
            with torch.no_grad():
                assert loss(model(inputs), targets) < before, (FAULTS[case], seed)


def test_the_cases_and_checks_are_the_exercises() -> None:
    exercise = get_exercise(SLUG)
    assert len(exercise.cases) == len(FAULTS)
    assert [check.key for check in exercise.checks] == [CHECK_OF[fault] for fault in FAULTS]


def test_the_judge_counts_what_it_measured() -> None:
    found = FILES.judged("right_norm_table", 2)
    measured = numbers(found)
    assert measured["parameters that would not learn (healthy stack)"] == 0
    assert measured["parameters that would not learn (a frozen layer)"] >= 1
    assert 0 < measured["smallest gradient norm (healthy, small gradients)"] < 1e-4
    assert found.measurements["your test (a part cut off)"] == "failed"


# -- tests that end otherwise ------------------------------------------------------------------

HEADER = "import pytest\n\n\ndef test_every_layer_learns(make_model, batch, loss_fn):\n"


def test_a_test_that_never_fails_misses_every_broken_model_and_says_it_built_none() -> None:
    found = judgement(SLUG, HEADER + "    pass\n")
    assert failing_checks(found) == BROKEN
    assert all(
        "your test never called make_model()" in check.message
        for check in found.checks
        if check.key in BROKEN
    )


def test_a_test_that_always_fails_fails_only_the_healthy_checks() -> None:
    found = judgement(SLUG, HEADER + "    assert False, 'always'\n")
    assert failing_checks(found) == {"healthy", "small-gradients"}


def test_pytest_fail_counts_as_a_failed_assert() -> None:
    code = FILES.code("right_norm_table").replace(
        '    assert dead == [], f"no gradient reaches {dead}"',
        '    if dead:\n        import pytest\n        pytest.fail(f"no gradient reaches {dead}")',
    )
    assert "pytest.fail" in code
    assert judgement(SLUG, code).status == "passed"


def test_a_skip_is_an_error_that_says_a_test_must_pass_or_fail() -> None:
    found = judgement(SLUG, HEADER + "    pytest.skip('later')\n")
    assert found.status == "error"
    assert found.message and "it must pass, or fail an assert" in found.message
    assert {check.status for check in found.checks} == {"error"}


def test_a_test_that_crashes_on_a_missing_gradient_is_an_error_not_a_catch() -> None:
    """p.grad.norm() on a parameter with no gradient raises AttributeError: on the models where
    a gradient is None that is not a verdict, and the run says why in the learner's terms."""
    code = HEADER + (
        "    model = make_model()\n"
        "    inputs, targets = batch\n"
        "    loss_fn(model(inputs), targets).backward()\n"
        "    for name, p in model.named_parameters():\n"
        "        assert p.grad.norm() > 0, name\n"
    )
    found = judgement(SLUG, code, 1)
    assert found.status == "error"
    assert (
        found.message and "AttributeError" in found.message and "exercise.py, line" in found.message
    )
    errored = {check.key for check in found.checks if check.status == "error"}
    assert {"cut-off", "frozen", "unused"} <= errored
    assert {"healthy", "small-gradients"}.isdisjoint(errored)
    statuses = {check.key: check.status for check in found.checks}
    assert statuses["times-zero"] == statuses["dead-relus"] == "pass"


# -- end to end, through the real sandbox ------------------------------------------------------


def test_a_wrong_test_is_rejected_in_the_real_sandbox(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The solution's pass goes through the real sandbox in test_real_sandbox.py; here a wrong
    test goes the same way and fails the same checks as through the forked double."""
    sandbox = pytest.importorskip("drills.sandbox", reason="drills/sandbox/ is not built yet")
    reason = sandbox.available()
    if reason is not None:
        pytest.skip(f"no sandbox can start here: {reason}")
    code = tmp_path / "mine.py"
    code.write_text(FILES.code("wrong_grad_not_none"))
    exit_code = main(["exercise", "run", SLUG, "--code", str(code), "--seed", "3", "--json"])
    judged = json.loads(capsys.readouterr().out)
    assert judged["status"] == "failed", judged
    assert exit_code != 0
    failed = {check["key"] for check in judged["checks"] if check["status"] != "pass"}
    assert failed == WRONG["wrong_grad_not_none"][0]
