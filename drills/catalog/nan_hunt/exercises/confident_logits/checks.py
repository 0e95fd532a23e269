"""Runs outside the sandbox: what log_probs returned on the probe, and the gradient of the token
loss through it, against float64's log-softmax; one step of the learner's loop from the
confident checkpoint against the step along the token loss's gradient; and the held-out loss of
the weights its training run left behind. All measured here from what came back, in float64:
nothing the learner's loop logs is read.

Thresholds, from the reference solution, three other right files and six wrong ones on seeds
0-4 (two hidden runs each; tests/exercises/test_nan_hunt_fixes.py):
- VALUE_TOLERANCE (1e-5) on |yours - float64| / (1 + the token's largest |logit|), float32's
  rounding at logits of that size: right files reach 6e-8 to 1.7e-7. An epsilon added to the
  probabilities caps a log-probability at log(eps), -13.8 for 1e-6 where the truth is about
  -1000 (0.99 on this scale); a log of a softmax gives -inf, in float64 too past about 745.
- GRADIENT_TOLERANCE (1e-5) on |yours - float64| times the real tokens (a token's own gradient
  entries lie between -1 and 1), on the same scale: right files reach 1.7e-8 to 5.5e-8; the
  epsilon leaves 0 where float64 has -1 on a confident mistake (0.03 on this scale), and a log
  of a softmax leaves NaN.
- STEP_COSINE (0.99) between one step of the loop from the confident checkpoint and the step
  down the token loss's gradient, in float64: right files 1 - 1e-10 or closer. A direction, so
  that a smaller rate or a clip does not fail it alone. A skipped step has length 0; the
  epsilon's steps go elsewhere (cosine -0.39 to 0.66); NaN weights fail it at once.
- LEARNS_BY, the drill's own bar: the held-out loss after STEPS steps at most half the first.
  Right files end at 0.096-0.245 of it; nan_to_num's worse run at 0.58-4.2.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence

import torch

from drills.catalog.nan_hunt.exercises.confident_logits.harness import STEPPED
from drills.catalog.nan_hunt.exercises.confident_logits.problem import (
    CONFIDENT_GAP,
    CONFIG,
    STEPS,
    Probe,
    Problem,
    build,
    held_out_loss,
    token_loss64,
)
from drills.catalog.nan_hunt.exercises.confident_logits.signature import signature_of
from drills.exercises.contract import Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    findings_check,
    missing_evidence,
    weights_check,
)
from drills.exercises.tensors import check_against

VALUE_TOLERANCE = 1e-5
GRADIENT_TOLERANCE = 1e-5
STEP_COSINE = 0.99
LEARNS_BY = 0.5
Measurements = dict[str, float | int | bool | str | None]


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(case, seed).model.state_dict())


def where(probe: Probe, index: tuple[int, ...]) -> tuple[str, str]:
    """The probe entry at `index` (sequence, token, class) in the learner's terms: which token
    ("on a token whose label ...") and which of its classes ("for its label")."""
    row = probe.logits[index[:2]].double()
    top = float(row.max())
    if bool(probe.mask[index[:2]]):
        label = int(probe.labels[index[:2]])
        below = top - float(row[label])
        token = "on a token whose label " + (
            f"sits {below:.0f} below its top class" if below >= 1 else "is its top class"
        )
    else:
        label, token = -1, "on a padding position"
    if float(row.min()) > 100 or top < -100:  # far from zero, all of them
        token += f" (all its logits near {float(row.mean()):+.0f})"
    below = top - float(row[index[2]])
    if index[2] == label:
        return token, "for its label"
    return token, f"for a class {below:.0f} below its top" if below >= 1 else "for its top class"


def first_bad(tensor: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(i) for i in (~torch.isfinite(tensor)).nonzero()[0])


def nonfinite_note(tensor: torch.Tensor) -> str:
    count = int((~torch.isfinite(tensor)).sum())
    return f"{count} of {tensor.numel()} values are not finite"


def received(case: CaseEvidence, name: str, like: torch.Tensor) -> torch.Tensor | None:
    found = (case.values or {}).get(name)
    if found is None or found.shape != like.shape or not found.is_floating_point():
        return None
    return found.double()


def values_finding(case: CaseEvidence, probe: Probe, measured: Measurements) -> str | None:
    mine = received(case, "log_probs", probe.logits)
    if mine is None:
        return f"at {case.label}, what log_probs returned did not come back"
    truth = torch.log_softmax(probe.logits.double(), dim=-1)
    if not bool(torch.isfinite(mine).all()):
        index = first_bad(mine)
        measured[f"log_probs error ({case.label})"] = None
        token, entry = where(probe, index)
        return (
            f"at {case.label}, {token}, log_probs gave {float(mine[index])} {entry}; the "
            f"log-probability there is {float(truth[index]):.4g} ({nonfinite_note(mine)})"
        )
    error = (mine - truth).abs() / scale_of(probe)
    measured[f"log_probs error ({case.label})"] = float(error.max())
    if float(error.max()) <= VALUE_TOLERANCE:
        return None
    index = tuple(int(i) for i in torch.unravel_index(error.argmax(), error.shape))
    token, entry = where(probe, index)
    return (
        f"at {case.label}, {token}, log_probs gave {float(mine[index]):.4g} {entry}; the "
        f"log-probability there is {float(truth[index]):.4g}: finite, but not the same number"
    )


def scale_of(probe: Probe) -> torch.Tensor:
    """1 + each token's largest |logit|: float32 rounds at about 6e-8 of it."""
    return 1 + probe.logits.double().abs().amax(dim=-1, keepdim=True)


def true_gradient(probe: Probe) -> torch.Tensor:
    logits = probe.logits.double().requires_grad_()
    (gradient,) = torch.autograd.grad(token_loss64(logits, probe.labels, probe.mask), logits)
    return gradient


def gradient_finding(case: CaseEvidence, probe: Probe, measured: Measurements) -> str | None:
    mine = received(case, "gradient", probe.logits)
    if mine is None:
        return (
            f"at {case.label}, the token loss taken from your log_probs has no gradient with "
            "respect to the logits: the result is not connected to them"
        )
    truth = true_gradient(probe)
    if not bool(torch.isfinite(mine).all()):
        index = first_bad(mine)
        measured[f"gradient error ({case.label})"] = None
        token, entry = where(probe, index)
        return (
            f"at {case.label}, {token}, the gradient of the token loss through your log_probs "
            f"is {float(mine[index])} {entry} ({nonfinite_note(mine)}); float64's is finite "
            "everywhere"
        )
    tokens = int(probe.mask.sum())
    error = (mine - truth).abs() * tokens / scale_of(probe)
    measured[f"gradient error ({case.label})"] = float(error.max())
    if float(error.max()) <= GRADIENT_TOLERANCE:
        return None
    index = tuple(int(i) for i in torch.unravel_index(error.argmax(), error.shape))
    token, entry = where(probe, index)
    return (
        f"at {case.label}, {token}, the gradient of the token loss through your log_probs is "
        f"{float(mine[index]) * tokens:.3g} / {tokens} {entry} ({tokens} real tokens); "
        f"float64's is {float(truth[index]) * tokens:.3g} / {tokens}"
    )


def flat(weights: dict[str, torch.Tensor], names: Sequence[str]) -> torch.Tensor:
    return torch.cat([weights[name].double().flatten() for name in names])


def step_finding(case: CaseEvidence, problem: Problem, measured: Measurements) -> str | None:
    """One step of the loop from the confident checkpoint, against the step down the gradient."""
    what = f"at {case.label}, one step of your loop from a network whose logits are up to "
    what += f"{CONFIDENT_GAP:.0f} apart"
    stepped = {
        name.removeprefix(STEPPED): value
        for name, value in (case.values or {}).items()
        if name.startswith(STEPPED)
    }
    problem_text = check_against(stepped, case.initial)
    if problem_text:
        return f"{what}: afterwards, {problem_text}"
    start = {name: value.detach() for name, value in problem.confident.state_dict().items()}
    names = list(start)
    step = flat(stepped, names) - flat(start, names)
    model = copy.deepcopy(problem.confident).double()
    batch = problem.stream[0]
    loss = token_loss64(model(batch.features.double()), batch.labels, batch.mask)
    gradient = torch.autograd.grad(loss, [dict(model.named_parameters())[n] for n in names])
    reference = -CONFIG.lr * torch.cat([g.flatten() for g in gradient])
    length = float(step.norm())
    measured[f"confident step / gradient step ({case.label})"] = length / float(reference.norm())
    if length == 0:
        return f"{what} did not move the weights: the step was skipped or came out zero"
    cosine = float(step.dot(reference)) / (length * float(reference.norm()))
    measured[f"confident step cosine ({case.label})"] = cosine
    if cosine >= STEP_COSINE:
        return None
    return (
        f"{what} went another way than the gradient of the token loss (cosine {cosine:.3f} "
        "between the two steps)"
    )


def learns_finding(case: CaseEvidence, problem: Problem, measured: Measurements) -> str | None:
    assert case.weights is not None
    first, last = held_out_loss(case.initial, problem), held_out_loss(case.weights, problem)
    measured[f"held-out loss / first ({case.label})"] = last / first
    if last <= LEARNS_BY * first:
        return None
    return (
        f"at {case.label}, {STEPS} steps took the held-out loss per token from {first:.3g} "
        f"to {last:.3g} ({last / first:.0%} of it)"
    )


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measured: Measurements = {}
    found: dict[str, list[str]] = {"log-probs": [], "log-probs-gradient": [], "confident-step": []}
    learns: list[str] = []
    for case in cases:
        problem = build(case.case, case.seed)
        if case.weights is not None:
            finding = learns_finding(case, problem, measured)
            learns += [finding] if finding else []
        if case.error:
            continue
        for key, finder in (
            ("log-probs", values_finding),
            ("log-probs-gradient", gradient_finding),
        ):
            finding = finder(case, problem.probe, measured)
            found[key] += [finding] if finding else []
        finding = step_finding(case, problem, measured)
        found["confident-step"] += [finding] if finding else []

    errored = [case for case in cases if case.error]
    passed = {
        "log-probs": "On every probe logit, log_probs is finite and float64's log-probability.",
        "log-probs-gradient": "Through log_probs, the token loss's gradient is float64's.",
        "confident-step": "From the confident network, one step goes down the token loss.",
    }
    for key, findings in found.items():
        if errored:
            checks.append(missing_evidence(exercise, key, errored))
        else:
            checks.append(findings_check(exercise, key, findings, passed[key]))
    unusable = [case for case in cases if case.weights is None]
    if unusable:
        checks.append(missing_evidence(exercise, "learns", unusable))
    else:
        fell = (
            f"In every hidden run the held-out loss fell to {LEARNS_BY:.0%} of its first or less."
        )
        checks.append(findings_check(exercise, "learns", learns, fell))
    signature = signature_of(cases[0], build(cases[0].case, cases[0].seed))
    return Assessment(checks, measured, signature)
