"""The write-it exercises judged on learner files kept as fixtures (tests/exercises/fixtures/):
two correct files written differently from the reference pass every check, and each plausible
wrong file fails exactly the checks its mistake breaks, with a message in the learner's terms.
The judges' own truths are checked against independent implementations of the same
definitions, and a file that breaks the documented format gets an error that says how."""

from pathlib import Path

import pytest

from drills.catalog.double_shift_labels.exercises.label_audit import checks as label_checks
from drills.catalog.double_shift_labels.exercises.label_audit import problem as label_problem
from drills.catalog.optimizer_membership.exercises.relative_update import checks as update_checks
from drills.catalog.optimizer_membership.exercises.relative_update import problem as update_problem
from drills.catalog.silent_no_learning.exercises.parameter_audit import checks as audit_checks
from drills.catalog.silent_no_learning.exercises.parameter_audit import problem as audit_problem
from drills.exercises.registry import get_exercise
from drills.kit.audit import ParameterAudit, grad_state
from drills.kit.causal_lm import IGNORE
from tests.exercises.judging import judgement, statuses

FIXTURES = Path(__file__).parent / "fixtures"
FOLDERS = {
    "parameter-audit": "parameter_audit",
    "relative-update": "relative_update",
    "label-audit": "label_audit",
}

# (exercise, wrong file): the checks it fails (every other passes) and what the first says.
WRONG = {
    ("parameter-audit", "wrong_grad_none_only"): (
        {"grad-state", "grad-norm"},
        "your audit said the gradient of 'gain' is 'finite'; it is 'non-finite'",
    ),
    ("parameter-audit", "wrong_first_group_only"): (
        {"in-optimizer"},
        "is not in the optimizer; it is, in param group 2 of 2",
    ),
    ("parameter-audit", "wrong_weight_norm"): ({"grad-norm"}, "the norm of the weight itself"),
    ("parameter-audit", "wrong_requires_grad_from_grad"): (
        {"requires-grad"},
        "In case 'detached layer' your audit said",
    ),
    ("parameter-audit", "wrong_clears_grads"): (
        {"leaves-model-alone"},
        "was gone (None) after your audit returned",
    ),
    ("relative-update", "wrong_gradient_norm"): (
        {"ratio", "not-held"},
        "it matches the gradient's norm over the weight's",
    ),
    ("relative-update", "wrong_aliased_before"): ({"ratio"}, "yet the step moved it"),
    ("relative-update", "wrong_zero_grad_first"): ({"one-step", "ratio"}, "no weight moved"),
    ("relative-update", "wrong_norm_after"): (
        {"ratio", "zero-norm"},
        "the ratio divides by its norm before it",
    ),
    ("relative-update", "wrong_epsilon"): ({"zero-norm"}, "the docstring asks for None"),
    ("label-audit", "wrong_shapes_only"): (
        {"shift", "padding", "prompt", "empty-rows"},
        "In case 'not shifted' your audit said the labels are shifted once",
    ),
    ("label-audit", "wrong_mask_at_label_position"): (
        {"prompt"},
        "your audit said prompt tokens count as targets; none does",
    ),
    ("label-audit", "wrong_batch_wide_targets"): (
        {"empty-rows"},
        "In case 'rows with nothing to learn' your audit named no row as having no target",
    ),
    ("label-audit", "wrong_vacuous_shift"): (
        {"shift"},
        "In case 'everything masked' your audit said the labels are not shifted (shift 0)",
    ),
    ("label-audit", "wrong_next_or_none"): (
        {"shift", "prompt"},
        "In case 'shifted twice' your audit said the labels are shifted once (shift 1)",
    ),
}


def fixture(slug: str, name: str) -> str:
    return (FIXTURES / FOLDERS[slug] / f"{name}.py").read_text()


def test_every_fixture_is_judged_here() -> None:
    kept = {
        (slug, path.stem)
        for slug, folder in FOLDERS.items()
        for path in (FIXTURES / folder).glob("*.py")
    }
    right = {(slug, stem) for slug, stem in kept if stem.startswith("right_")}
    assert kept == set(WRONG) | right
    for slug in FOLDERS:
        assert len([stem for s, stem in right if s == slug]) >= 2
        assert len([stem for s, stem in WRONG if s == slug]) >= 3


@pytest.mark.parametrize(
    ("slug", "name"),
    sorted(
        (slug, path.stem)
        for slug, folder in FOLDERS.items()
        for path in (FIXTURES / folder).glob("right_*.py")
    ),
)
def test_a_correct_file_written_differently_passes(slug: str, name: str) -> None:
    found = judgement(slug, fixture(slug, name))
    assert found.status == "passed", [check.message for check in found.checks]


@pytest.mark.parametrize(("slug", "name"), sorted(WRONG))
def test_a_wrong_file_fails_the_checks_its_mistake_breaks(slug: str, name: str) -> None:
    failing, says = WRONG[slug, name]
    found = judgement(slug, fixture(slug, name))
    assert found.status == "failed", found.message
    assert {key for key, status in statuses(found).items() if status != "pass"} == failing
    messages = [check.message for check in found.checks if check.key in failing]
    assert any(says in message for message in messages), messages
    assert all(message.startswith("In case '") for message in messages)


@pytest.mark.parametrize(
    ("slug", "code", "says"),
    [
        (
            "parameter-audit",
            "def audit(model, optimizer, loss):\n    return []\n",
            "audit returned list; it must return a dict",
        ),
        (
            "parameter-audit",
            "def audit(model, optimizer, loss):\n"
            "    return {n: {'requires_grad': 1, 'in_optimizer': True, 'grad': 'none',"
            " 'grad_norm': None} for n, _ in model.named_parameters()}\n",
            "requires_grad is int; use True or False",
        ),
        (
            "parameter-audit",
            "def audit(model, optimizer, loss):\n    return {'head.weight': {}}\n",
            "audit returned no row for",
        ),
        (
            "relative-update",
            "def relative_update(model, optimizer, name):\n    return 'a lot'\n",
            None,
        ),
        (
            "label-audit",
            "def audit_labels(input_ids, targets, attention_mask, prompt_mask):\n"
            "    return {'shift': True, 'padding_masked': True, 'prompt_masked': True,"
            " 'rows_without_targets': []}\n",
            "shift is bool; use 0, 1, 2 or None",
        ),
        (
            "label-audit",
            "def audit_labels(input_ids, targets, attention_mask, prompt_mask):\n"
            "    return {'shift': 1, 'padding_masked': True, 'prompt_masked': True,"
            " 'rows_without_targets': [99]}\n",
            "rows_without_targets names a row outside the batch",
        ),
    ],
    ids=[
        "audit-list",
        "audit-int-flag",
        "audit-missing-rows",
        "update-str",
        "labels-bool-shift",
        "labels-row-out",
    ],
)
def test_a_file_that_breaks_the_format_is_told_how(slug: str, code: str, says: str | None) -> None:
    found = judgement(slug, code)
    if says is None:  # a number that is not one: the checks say so, no run fails
        assert found.status == "failed"
        assert "you returned str" in " ".join(check.message for check in found.checks)
        return
    assert found.status == "error"
    assert found.message and says in found.message
    assert {check.status for check in found.checks} == {"error"}


def test_each_problem_has_a_setup_per_hidden_run() -> None:
    assert len(audit_problem.FAULTS) == len(get_exercise("parameter-audit").cases)
    assert len(update_problem.SETUPS) == len(get_exercise("relative-update").cases)
    assert len(label_problem.FAULTS) == len(get_exercise("label-audit").cases)


# -- the judges' truths, against other implementations of the same definitions ---------------


@pytest.mark.parametrize("fault", audit_problem.FAULTS)
def test_the_audit_truth_agrees_with_the_kit_audit(fault: str) -> None:
    kit_names = {"nonfinite": "non-finite"}
    seen = set()
    for seed in range(6):
        problem = audit_problem.build(fault, seed)
        rows = audit_checks.reference_rows(problem)
        kit = ParameterAudit(problem.model, problem.optimizer)
        kit.after_backward()
        for row, kit_row in zip(rows, kit.rows(), strict=True):
            state, norm = grad_state(dict(problem.model.named_parameters())[row.name].grad)
            assert row.name == kit_row["name"]
            assert row.requires_grad == kit_row["requires_grad"]
            assert (row.group is not None) == kit_row["in_optimizer"]
            assert row.grad == kit_names.get(state, state)
            if norm is None:
                assert row.norm is None
            else:
                assert row.norm == pytest.approx(norm, rel=1e-5)
            seen.add(row.grad)
    healthy = {"finite"}
    expected = {"detached": {"none"}, "frozen": {"none"}, "nan-grad": {"non-finite"}}
    expected["zeroed-detached"] = {"zero"}
    assert seen == healthy | expected.get(fault, set())


@pytest.mark.parametrize("setup", update_problem.SETUPS)
def test_the_update_truth_agrees_with_the_kit_audit(setup: str) -> None:
    for seed in range(4):
        truth = update_checks.truth_of(setup, seed)
        problem = update_problem.build(setup, seed)
        kit = ParameterAudit(problem.model, problem.optimizer)
        with update_problem.one_thread():
            problem.optimizer.step()
        ratio = {row["name"]: row["update_ratio"] for row in kit.rows()}[truth.name]
        if setup == "at-zero":
            assert truth.ratio is None and ratio is None
        elif setup == "not-held":
            assert truth.ratio == ratio == 0.0
        else:
            assert truth.ratio == pytest.approx(ratio, rel=1e-6)
            assert truth.ratio is not None  # narrows float | None for the type checker
            assert 1e-5 < truth.ratio < 0.5


def loop_report(batch: label_problem.LabelBatch) -> label_checks.LabelReport:
    """The docstring's definitions, one label at a time."""
    ids, labels = batch.input_ids.tolist(), batch.targets.tolist()
    counted = [(b, t) for b, row in enumerate(labels) for t, v in enumerate(row) if v != IGNORE]
    length = len(ids[0])
    fits = [
        s
        for s in (0, 1, 2)
        if all(t + s < length and labels[b][t] == ids[b][t + s] for b, t in counted)
    ]
    shift = fits[0] if counted and len(fits) == 1 else None
    pad = prompt = False
    if shift is not None:
        pad = any(int(batch.attention_mask[b, t + shift]) == 0 for b, t in counted)
        prompt = any(bool(batch.prompt_mask[b, t + shift]) for b, t in counted)
    rows = {b for b, _ in counted}
    return label_checks.LabelReport(
        shift, not pad, not prompt, [b for b in range(len(ids)) if b not in rows]
    )


@pytest.mark.parametrize("case", range(len(label_problem.FAULTS)))
def test_the_label_truth_agrees_with_the_definitions_label_by_label(case: int) -> None:
    for seed in range(10):
        batch = label_problem.build(case, seed)
        truth = label_checks.truth_of(batch)
        assert truth == loop_report(batch)
        assert (truth.empty_rows != []) == (case in (5, 6))
        if case == 5:
            assert all(bool(batch.prompt_mask[row].all()) for row in truth.empty_rows)


def test_an_audit_that_changes_the_weights_fails_leaves_model_alone() -> None:
    """The weights that came back are compared with the ones rebuilt here, not trusted."""
    code = fixture("parameter-audit", "right_identity_loop").replace(
        "    return rows\n",
        "    with torch.no_grad():\n"
        "        for p in model.parameters():\n"
        "            p.mul_(2)\n"
        "    return rows\n",
    )
    found = judgement("parameter-audit", code)
    assert statuses(found)["leaves-model-alone"] == "fail"
    assert "had changed after your audit returned" in found.checks[-1].message
