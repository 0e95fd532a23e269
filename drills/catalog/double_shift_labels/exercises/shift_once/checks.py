"""Runs outside the sandbox: the learner's labels against the reference on the hidden probes,
the copies of the probes it was handed as it left them against the probes rebuilt here
(untouched.py), and the trained model's next-token loss on the response, all measured here.

The drill's signature (DoubleShiftSignature) of the first run is filled from measurements made
here on the largest probe batch: the trained weights scored against the learner's labels
(final_loss, real_token_loss, response_loss: the loss "as trained"), targets_counted,
prompt_share, pad_share and labels_equal_inputs from the learner's labels as the model pairs
them, future_influence from the trained weights, the entropy floors from the source, and
weight_change. Fields read from a training curve (initial_loss, second_half_drop, steps_run,
nonfinite_step, raw_loss_finite) stay None: the run's own curve is untrusted.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from drills.catalog.double_shift_labels.evidence import future_influence, labels_equal_inputs
from drills.catalog.double_shift_labels.exercises.shift_once.problem import (
    MEASURED,
    PROBES,
    SOURCE,
    LabelBatch,
    ShiftingLM,
    build,
    probe_batches,
    show_token,
)
from drills.catalog.double_shift_labels.exercises.shift_once.untouched import (
    batch_changes,
    untouched_check,
)
from drills.catalog.double_shift_labels.signature import DoubleShiftSignature
from drills.catalog.double_shift_labels.train import share
from drills.exercises.contract import CheckResult, Exercise
from drills.exercises.evidence import (
    Assessment,
    CaseEvidence,
    missing_evidence,
    nats,
    result,
    total_change,
    weights_check,
)
from drills.kit.causal_lm import IGNORE, TextBatch, chance_loss, entropy_references

FLOOR_BAND = 0.15  # the drill's band: within ±15% of the next-token entropy sits on it


def reference_labels(batch: LabelBatch) -> torch.Tensor:
    """What this model needs: the tokens unmoved (it shifts them), prompt and padding masked.
    Kept here, not in problem.py: the sandbox masks this file, so the code cannot import it."""
    labels = batch.input_ids.clone()
    labels[batch.attention_mask == 0] = IGNORE
    labels[~batch.response_mask] = IGNORE
    return labels


def reference_weights(case: int, seed: int) -> dict[str, torch.Tensor]:
    return dict(build(seed).model.state_dict())


def assess(exercise: Exercise, cases: Sequence[CaseEvidence]) -> Assessment:
    checks = [weights_check(exercise, cases, "weights")]
    measurements: dict[str, float | int | bool | str | None] = {}
    alignment: list[str] = []
    changes: list[str] = []  # the batches prepare_labels changed in place
    losses: list[tuple[str, float, float]] = []  # (label, measured, floor)
    signature = None
    for case in cases:
        problem = build(case.seed)
        probes = probe_batches(problem.source, case.seed)
        labels, problem_text = learner_probe_labels(case, probes)
        changes.extend(f"{case.label}: {text}" for text in batch_changes(case, probes))
        if labels is None:
            alignment.append(f"{case.label}: {problem_text}")
        else:
            alignment.extend(
                f"{case.label}: {text}"
                for i, batch in enumerate(probes)
                if (text := misalignment(batch, labels[i])) is not None
            )
        if case.weights is None:
            continue
        model = problem.model
        model.load_state_dict(case.weights)
        model.eval()
        floor, two_step = entropy_references(problem.source)
        measured = probes[MEASURED]
        with torch.no_grad():
            logits, loss = model(measured.input_ids, reference_labels(measured))
        assert loss is not None
        losses.append((case.label, float(loss), floor))
        measurements[f"next-letter loss ({case.label})"] = float(loss)
        if signature is None and labels is not None:
            signature = signature_of(
                case, model, logits, measured, labels[MEASURED], floor, two_step
            )

    checks.append(aligned_check(exercise, cases, alignment))
    checks.append(untouched_check(exercise, cases, changes))
    checks.append(entropy_check(exercise, cases, losses))
    measurements["next-token entropy"] = losses[0][2] if losses else None
    return Assessment(checks, measurements, signature)


def learner_probe_labels(
    case: CaseEvidence, probes: list[LabelBatch]
) -> tuple[list[torch.Tensor] | None, str]:
    if case.error:
        return None, f"your code did not finish ({case.error.strip().splitlines()[-1]})"
    values = case.values or {}
    found = []
    for i, batch in enumerate(probes):
        labels = values.get(f"probe-{i}")
        if labels is None:
            return None, "no labels came back for the hidden batches"
        if tuple(labels.shape) != tuple(batch.input_ids.shape) or labels.dtype != torch.int64:
            return None, "the labels that came back do not have the batch's shape"
        if not bool(((labels == IGNORE) | ((labels >= 0) & (labels < SOURCE.vocab))).all()):
            return None, f"labels came back that are neither token ids nor {IGNORE}"
        found.append(labels)
    return found, ""


def misalignment(batch: LabelBatch, labels: torch.Tensor) -> str | None:
    """What differs between the learner's labels and the reference on one probe, or None."""
    reference = reference_labels(batch)
    wrong = labels != reference
    total = int(wrong.sum())
    if total == 0:
        return None
    response = batch.response_mask
    on_response = int((wrong & response).sum())
    parts = [f"{on_response} on response tokens"] if on_response else []
    if total - on_response:
        parts.append(f"{total - on_response} on prompt or padding positions")
    b, t = (int(i) for i in wrong.nonzero()[0])
    where = "a response token" if response[b, t] else "a prompt or padding position"
    text = (
        f"in a hidden batch of {batch.input_ids.shape[0]}x{batch.input_ids.shape[1]} tokens, "
        f"{total} labels differ from what this model needs ({', '.join(parts)}). "
        f"First: sequence {b}, position {t} "
        f"({where}, input {show_token(int(batch.input_ids[b, t]))}), "
        f"your label is {describe_label(batch.input_ids[b], t, int(labels[b, t]))}"
    )
    return text


def describe_label(row: torch.Tensor, t: int, label: int) -> str:
    if label == IGNORE:
        return "-100 (not counted)"
    moves = [k for k in range(-3, 4) if 0 <= t + k < len(row) and int(row[t + k]) == label]
    text = show_token(label)
    if moves and 0 not in moves:
        k = min(moves, key=abs)
        text += f", the input {abs(k)} position{'s' if abs(k) > 1 else ''} "
        text += "later" if k > 0 else "earlier"
    elif 0 in moves:
        text += ", the input at that very position"
    return text


def aligned_check(
    exercise: Exercise, cases: Sequence[CaseEvidence], found: list[str]
) -> CheckResult:
    if any(case.error for case in cases):
        return missing_evidence(exercise, "labels-aligned", [c for c in cases if c.error])
    if found:
        return result(exercise, "labels-aligned", "fail", found[0][0].upper() + found[0][1:] + ".")
    count = len(PROBES) * len(cases)
    return result(
        exercise, "labels-aligned", "pass", f"Your labels match on all {count} hidden batches."
    )


def entropy_check(
    exercise: Exercise, cases: Sequence[CaseEvidence], losses: list[tuple[str, float, float]]
) -> CheckResult:
    if len(losses) < len(cases):
        return missing_evidence(
            exercise, "loss-at-entropy", [c for c in cases if c.weights is None]
        )
    off = [
        (label, loss, floor)
        for label, loss, floor in losses
        if abs(loss - floor) > FLOOR_BAND * floor
    ]
    if off:
        label, loss, floor = max(off, key=lambda item: abs(item[1] - item[2]))
        return result(
            exercise,
            "loss-at-entropy",
            "fail",
            f"In {label}, the model trained with your labels scores {nats(loss)} at predicting "
            f"the next response letter; the text allows {nats(floor)} (within ±"
            f"{FLOOR_BAND:.0%}), and a model trained on the right pairs gets there.",
        )
    worst = max(loss for _, loss, _ in losses)
    return result(
        exercise,
        "loss-at-entropy",
        "pass",
        f"The trained models predict the next response letter at {nats(worst)} or better, "
        f"the text's own entropy (±{FLOOR_BAND:.0%}).",
    )


def signature_of(
    case: CaseEvidence,
    model: ShiftingLM,
    logits: torch.Tensor,
    batch: LabelBatch,
    labels: torch.Tensor,
    floor: float,
    two_step: float,
) -> DoubleShiftSignature:
    """The drill's signature, with the learner's labels as the model pairs them."""
    targets = torch.full_like(labels, IGNORE)
    targets[:, :-1] = labels[:, 1:]  # what each position's logit is scored against
    per_token = F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        targets.reshape(-1),
        ignore_index=IGNORE,
        reduction="none",
    ).view(targets.shape)
    counted = targets != IGNORE
    real = counted & (targets != SOURCE.pad)
    response = counted & (targets < SOURCE.response_symbols)

    def mean(mask: torch.Tensor) -> float | None:
        count = int(mask.sum())
        return float(per_token[mask].sum()) / count if count else None

    text = TextBatch(
        batch.input_ids,
        ~batch.response_mask & (batch.attention_mask == 1),
        batch.attention_mask == 0,
        batch.response_mask.sum(dim=1),
    )
    values = targets[counted]
    assert case.weights is not None
    return DoubleShiftSignature(
        targets_counted=int(counted.sum()),
        prompt_share=share(values >= SOURCE.prompt_base, values != SOURCE.pad),
        pad_share=share(values == SOURCE.pad),
        final_loss=mean(counted),
        real_token_loss=mean(real),
        response_loss=mean(response),
        next_token_entropy=floor,
        two_step_entropy=two_step,
        chance_loss=chance_loss(SOURCE),
        weight_change=total_change(case.weights, case.initial),
        labels_equal_inputs=labels_equal_inputs(text, targets),
        future_influence=future_influence(
            model.lm, batch.input_ids, SOURCE.prompt_length + SOURCE.min_response // 2, SOURCE.vocab
        ),
    )
