"""Runs outside the sandbox: the learner's answer for each hidden run against the truth, found
here by running the rebuilt model itself (forward hooks on every module, the loss, then the
backward with a hook on every module); the hooks the harness counted after the finder returned;
and the weights that came back against the rebuilt ones.

No drill signature: "Hunt the NaN" describes a training run, and one forward and backward has
none, so the judgement carries no verdict.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field

import torch
from torch import nn

from drills.catalog.nan_hunt.exercises.first_non_finite.problem import (
    FAULTS,
    STAGES,
    Answer,
    Problem,
    build,
    finite_copy,
    one_thread,
)
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    weights_check,
)

# The check that judges each hidden run's answer.
CHECK_OF = {
    "healthy": "healthy",
    "inf-weight": "forward",
    "log-negative": "forward",
    "divide-zero": "forward",
    "exp-overflow": "forward",
    "hidden": "hidden-forward",
    "loss": "loss",
    "backward": "backward",
}
ANSWER_CHECKS = ("healthy", "forward", "hidden-forward", "loss", "backward")
WHERE = {
    "forward": "the output of {}",
    "backward": "the gradient that the backward of {} sends toward its input",
}


@dataclass
class Trace:
    """Every non-finite value of one forward, loss and backward, in the order they were made."""

    forward: list[str] = field(default_factory=list)  # modules whose output held NaN or inf
    loss_finite: bool = True
    backward: list[str] = field(default_factory=list)  # modules whose input gradient did

    @property
    def first(self) -> Answer:
        if self.forward:
            return "forward", self.forward[0]
        if not self.loss_finite:
            return "loss", None
        if self.backward:
            return "backward", self.backward[0]
        return None


def finite(value: object) -> bool:
    tensors = value if isinstance(value, tuple | list) else (value,)
    return all(
        bool(torch.isfinite(t).all())
        for t in tensors
        if isinstance(t, torch.Tensor) and t.is_floating_point()
    )


def measure(problem: Problem) -> Trace:
    """Runs the hidden model, its loss and, when both are finite, the backward."""
    trace = Trace()
    names = {module: name for name, module in problem.model.named_modules()}

    def forward_hook(module: nn.Module, inputs: object, output: object) -> None:
        if not finite(output):
            trace.forward.append(names[module])

    def backward_hook(module: nn.Module, grad_input: object, grad_output: object) -> None:
        if not finite(grad_input):
            trace.backward.append(names[module])

    handles = [m.register_forward_hook(forward_hook) for m in names]
    handles += [m.register_full_backward_hook(backward_hook) for m in names]
    try:
        with one_thread(), warnings.catch_warnings():
            # A module whose inputs need no gradient (the first layer) gets its hook called
            # with grad_input None, and torch warns: expected here.
            warnings.simplefilter("ignore")
            loss = problem.loss_fn(problem.model(problem.inputs))
            trace.loss_finite = finite(loss)
            if not trace.forward and trace.loss_finite:
                loss.backward()  # type: ignore[no-untyped-call]
    finally:
        for handle in handles:
            handle.remove()
    return trace


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    state = build(FAULTS[case], seed).model.state_dict()
    return finite_copy({name: t.detach().clone() for name, t in state.items()})


def learner_answer(case: CaseEvidence) -> tuple[bool, Answer]:
    """(readable, the answer) from what the harness sent."""
    values = case.values or {}
    code, text = values.get("answer"), values.get("answer-module")
    if code is None or text is None or code.dtype != torch.int64 or tuple(code.shape) != (2,):
        return False, None
    if text.dtype != torch.uint8 or text.dim() != 1:
        return False, None
    stage, has_module = (int(v) for v in code.tolist())
    if stage == -1:
        return True, None
    if stage not in range(len(STAGES)) or has_module not in (0, 1):
        return False, None
    try:
        module = bytes(text.tolist()).decode("utf-8") if has_module else None
    except UnicodeDecodeError:
        return False, None
    return True, (STAGES[stage], module)


def said(answer: Answer) -> str:
    if answer is None:
        return "None"
    stage, module = answer
    return f"({stage!r}, {module!r})"


def answer_problem(answer: Answer, trace: Trace, modules: dict[str, nn.Module]) -> str | None:
    """What is wrong with the answer, in the learner's terms; None when it is right. A name that
    is no module's dotted name but the class of the right module counts here as the right module
    (the names check says how to spell it)."""
    truth = trace.first
    if answer == truth:
        return None
    if answer is not None and truth is not None and answer[0] == truth[0]:
        name, right = answer[1], truth[1]
        if name not in modules and right is not None and name == type(modules[right]).__name__:
            return None
    text = f"your finder returned {said(answer)}"
    if truth is None:
        return text + "; every output, the loss and every gradient were finite: return None"
    stage, right = truth
    if stage == "loss":
        return text + "; every module's output was finite and the loss was not"
    where = WHERE[stage].format(repr(right))
    if answer is None:
        return text + f"; {where} held NaN or inf"
    if answer[0] == "forward" and stage == "backward":
        return text + f"; every module's output was finite, and {where} was not"
    if answer[0] != stage:
        first = "the loss" if answer[0] == "loss" else "the backward pass"
        return text + f", but {first} is not where it starts: {where} held NaN or inf"
    name = answer[1]
    later = trace.forward if stage == "forward" else trace.backward
    if name in later:
        return text + f"; that is not the first: {where} held NaN or inf before it"
    if name not in modules:
        return text + f"; {name!r} is no module of this model, and {where} held NaN or inf"
    return text + f"; {WHERE[stage].format(repr(name))} was finite, and {where} was not"


def name_problem(answer: Answer, modules: dict[str, nn.Module]) -> str | None:
    if answer is None or answer[1] is None or answer[1] in modules:
        return None
    name = answer[1]
    classes = [key for key, module in modules.items() if type(module).__name__ == name]
    text = f"your finder named {name!r}, which is not a name model.named_modules() gives"
    if classes:
        return text + f" (it is a class: named_modules() calls a module of it {classes[0]!r})"
    return text


def hooks_left(case: CaseEvidence, problem: Problem) -> list[str]:
    values = case.values or {}
    per_module, per_parameter = values.get("hooks-modules"), values.get("hooks-parameters")
    left = values.get("hooks-global")
    modules = [name for name, _ in problem.model.named_modules()]
    parameters = [name for name, _ in problem.model.named_parameters()]
    if (
        per_module is None
        or per_parameter is None
        or left is None
        or tuple(per_module.shape) != (len(modules),)
        or tuple(per_parameter.shape) != (len(parameters),)
        or left.numel() != 1
    ):
        return ["no count of the hooks came back"]
    found = []
    for kind, names, counts in (
        ("module", modules, per_module),
        ("parameter", parameters, per_parameter),
    ):
        for name, count in zip(names, counts.tolist(), strict=True):
            if count:
                where = f"the {kind} {name!r}" if name else "the model itself"
                found.append(
                    f"after your finder returned, {count} hook(s) were still registered on "
                    f"{where}: keep the handle each register_ call returns, and remove it"
                )
    if int(left.item()):
        found.append(
            f"after your finder returned, {int(left.item())} global module hook(s) were still "
            "registered"
        )
    return found


def weights_moved(case: CaseEvidence, problem: Problem) -> list[str]:
    values = case.values or {}
    for name, start in problem.model.state_dict().items():
        came = values.get(f"param:{name}")
        if came is None or came.shape != start.shape or not torch.equal(came, start):
            return [
                f"{name!r} had changed after your finder returned: a finder must leave the "
                "weights as it found them"
            ]
    return []


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights", what="weights", shown=1)]
    keys = (*ANSWER_CHECKS, "names", "hooks-removed", "leaves-model-alone")
    found: dict[str, list[str]] = {key: [] for key in keys}
    measurements: dict[str, float | int | bool | str | None] = {}
    for case in cases:
        if case.error:
            continue
        fault = FAULTS[case.case]
        problem = build(fault, case.seed)
        trace = measure(problem)
        measurements[f"non-finite module outputs ({case.label})"] = len(trace.forward)
        modules = dict(problem.model.named_modules())
        readable, answer = learner_answer(case)
        clause = f"in case '{case.label}' "
        if not readable:
            found[CHECK_OF[fault]].append(clause + "no readable answer came back")
        else:
            wrong = answer_problem(answer, trace, modules)
            if wrong:
                found[CHECK_OF[fault]].append(clause + wrong)
            badly_named = name_problem(answer, modules)
            if badly_named:
                found["names"].append(clause + badly_named)
        found["hooks-removed"] += [clause + text for text in hooks_left(case, problem)]
        found["leaves-model-alone"] += [clause + text for text in weights_moved(case, problem)]

    titles = {
        "healthy": "On the healthy model your finder returned None.",
        "forward": "Your finder named the first module whose output went non-finite, at "
        "every depth.",
        "hidden-forward": "Your finder found the non-finite output that a later module hides.",
        "loss": "Your finder named the loss when it alone went non-finite.",
        "backward": "Your finder named the module where the backward pass went non-finite.",
        "names": "Every module your finder named is named as model.named_modules() names it.",
        "hooks-removed": "No hook was left registered after your finder returned.",
        "leaves-model-alone": "Every weight came back as your finder found it.",
    }
    errored = [case for case in cases if case.error]
    for key, passed in titles.items():
        if errored:
            checks.append(missing_evidence(exercise, key, errored, shown=1))
        else:
            checks.append(findings_check(exercise, key, found[key], passed))
    return Assessment(checks, measurements)
