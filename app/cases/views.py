"""What the case pages show: before the verdict only what the case's evidence allows (neutral
chart names, opaque form values, no knobs or commands); after it, the truth, every replay
command, the hidden and fixed runs on shared axes, and the score."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session

from app.cases import code_reveal
from app.cases import records as case_records
from app.cases import service as cases
from app.cases.models import CaseAttempt, CaseRun, CaseRunKind, CaseStage
from app.diagnosis.shown import cause_options, chart_specs, option_of, rename_for, stored_record
from app.runs import evidence
from app.runs.models import Attempt
from drills.cases import evidence as case_evidence
from drills.cases.contract import FAMILIES, Case, CaseSet, Experiment
from drills.cases.draw import Draw, fix_knobs
from drills.cases.outcomes import reading
from drills.cases.registry import is_offered
from drills.core.source import training_source
from drills.core.source_diff import SourceDiff, source_diff

STAGE_WORDS = {
    CaseStage.diagnosing: "Diagnose",
    CaseStage.investigating: "Investigate",
    CaseStage.fixing: "Fix running",
    CaseStage.revealed: "Revealed",
}


def run_view(
    session: Session, case: Case, run: CaseRun, attempt: Attempt, revealed: bool
) -> dict[str, Any]:
    case_set = case.case_set
    experiment: Experiment | None = (
        case_set.experiment(run.experiment_key) if run.experiment_key else None
    )
    assert attempt.id is not None
    series, _ = evidence.series_and_cursor(session, attempt_id=attempt.id)
    rename = rename_for(case_set)
    shown_series: dict[str, list[Any]] = {}
    for name, points in series.items():
        label = rename(name)
        if label is not None:
            shown_series[label] = points
    view: dict[str, Any] = {
        "id": run.id,
        "kind": run.kind,
        "experiment": experiment,
        "status": attempt.status,
        "final": attempt.final,
        "series": shown_series,
        # Its stream counts shown points (app/runs/streams.py): a point id would count hidden ones.
        "cursor": sum(len(points) for points in shown_series.values()),
        # A run's error text is the drill's and may name what it checked: words of our own.
        "failed": attempt.final and attempt.status != "succeeded",
    }
    if attempt.final:
        view["shown"] = case_evidence.visible(case_set, experiment, stored_record(attempt))
    if revealed:
        view["command"] = attempt.command
        view["error"] = attempt.error
        view["verdict"] = attempt.observed_hypothesis
    return view


def title_of(run: dict[str, Any]) -> str:
    if run["kind"] == CaseRunKind.symptom:
        return "The run you were handed"
    if run["kind"] == CaseRunKind.fix:
        return "Your fix, run"
    return f"Experiment: {run['experiment'].title}"


def overlay(case_set: CaseSet, runs: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The hidden run and the fixed run on shared axes: each series of the first chart twice."""
    symptom = next((run for run in runs if run["kind"] == CaseRunKind.symptom), None)
    fix = next((run for run in runs if run["kind"] == CaseRunKind.fix), None)
    if symptom is None or fix is None or not case_set.charts:
        return None
    chart = chart_specs(case_set)[0]
    series: dict[str, list[Any]] = {}
    metrics = []
    for pattern in chart["metrics"]:
        for who, run in (("as handed", symptom), ("fixed", fix)):
            for label, points in run["series"].items():
                exact = label == pattern
                prefixed = pattern.endswith("*") and label.startswith(pattern[:-1])
                if exact or prefixed:
                    name = f"{label} ({who})"
                    series[name] = points
                    metrics.append(name)
    spec = chart | {"key": "overlay", "title": "As handed and fixed", "metrics": metrics}
    return {"spec": spec, "series": series}


def case_page_context(session: Session, case_attempt: CaseAttempt) -> dict[str, Any]:
    case = cases.case_of(case_attempt)
    case_set = case.case_set
    assert case_attempt.id is not None
    revealed = case_attempt.stage == CaseStage.revealed
    runs = [
        run_view(session, case, run, attempt, revealed)
        for run, attempt in case_records.runs_of(session, case_attempt.id)
    ]
    for run in runs:
        run["title"] = title_of(run)
    spent = [run["experiment"].key for run in runs if run["experiment"] is not None]
    diagnosis = case_attempt.diagnosis or {}
    cause_text = {cause.key: cause.text for cause in case_set.causes}
    context: dict[str, Any] = {
        "case": case,
        "offered": is_offered(case.key),
        "case_attempt": case_attempt,
        "stage": case_attempt.stage,
        "stage_words": STAGE_WORDS[CaseStage(case_attempt.stage)],
        "charts": chart_specs(case_set),
        "runs": runs,
        "live": any(not run["final"] for run in runs),
        "causes": cause_options(case_set),
        "experiments": case_set.experiments,
        "fixes": case_set.fixes,
        "code_verdicts": code_reveal.offered(case, case_attempt),
        "spent": spent,
        "left": max(case_attempt.budget - len(spent), 0),
        "diagnosis": diagnosis,
        "diagnosis_text": {
            "leading": cause_text.get(diagnosis.get("leading", ""), ""),
            "alternatives": [cause_text.get(key, "") for key in diagnosis.get("alternatives", [])],
            "first_test": next(
                (e.title for e in case_set.experiments if e.key == diagnosis.get("first_test")),
                "",
            ),
        },
        "diagnosis_locked": bool(spent)
        or case_attempt.stage in (CaseStage.fixing, CaseStage.revealed),
        # The stored diagnosis as form values, to prefill the form while it may still change.
        "diagnosis_options": {
            "leading": option_of(case_set, diagnosis.get("leading", "")),
            "alternatives": [option_of(case_set, k) for k in diagnosis.get("alternatives", [])],
        },
    }
    if revealed:
        context |= reveal_context(case, case_attempt, runs)
        context |= code_reveal.revealed_code(session, case, case_attempt)
    return context


def reveal_context(
    case: Case, case_attempt: CaseAttempt, runs: list[dict[str, Any]]
) -> dict[str, Any]:
    case_set = case.case_set
    cause = case_set.cause(case_attempt.cause)
    texts = {item.key: item.text for item in case_set.causes}
    experiments = {item.key: item for item in case_set.experiments}
    score = case_attempt.score or {}
    diagnosis = case_attempt.diagnosis or {}
    considered = [diagnosis.get("leading", ""), *diagnosis.get("alternatives", [])]
    experiment_rows = []
    for item in score.get("experiments", []):
        experiment = experiments.get(item["key"])
        if experiment is None:
            continue
        experiment_rows.append(
            {
                "title": experiment.title,
                "separated": item["separated"],
                "would_have": [
                    experiments[k].title for k in item["would_have"] if k in experiments
                ],
                # What this test reads under each cause the learner weighed, from real runs.
                "readings": [
                    (texts.get(key, key), reading(case_set, key, experiment.key))
                    for key in considered
                    if key
                ],
            }
        )
    return {
        "truth": {
            "cause": cause.text,
            "family": FAMILIES[cause.family],
            "named": texts.get(case_attempt.named_cause or "", ""),
            "fix": case_set.fix(cause.fix).text,
            "chosen_fix": case_set.fix(case_attempt.fix_key).text if case_attempt.fix_key else "",
            "knobs": case_attempt.knobs,
            "drill": case_set.drill_object,
        },
        "score": score,
        "experiment_rows": experiment_rows,
        "overlay": overlay(case_set, runs),
        # Revealed only: what the fix changes in the symptom's code, then that code with the
        # hidden cause's lines marked.
        "code_diff": fix_diff(case, case_attempt),
        "diff_against_defaults": False,
        "code_files": training_source(case_set.drill_object, case_attempt.knobs),
    }


def fix_diff(case: Case, case_attempt: CaseAttempt) -> SourceDiff:
    """The symptom's code as it ran against the code with the fix that heals the drawn cause
    (not the learner's fix: the diff shows what the cause was)."""
    case_set = case.case_set
    drawn = Draw(case_attempt.cause, case_attempt.seed, dict(case_attempt.knobs))
    healing = case_set.fix(case.fix_of(case_attempt.cause))
    return source_diff(case_set.drill_object, case_attempt.knobs, fix_knobs(case, drawn, healing))


def case_list(session: Session, learner_id: int | None) -> list[dict[str, Any]]:
    """Every case offered, with the learner's state on it: not started, open, solved or missed;
    then each retired case the learner has attempts at (no new draws, the old ones still open)."""
    from drills.cases.registry import all_cases, retired_cases

    mine: dict[str, list[CaseAttempt]] = {}
    if learner_id is not None:
        for attempt in cases.case_attempts_of(session, learner_id):
            mine.setdefault(attempt.case_key, []).append(attempt)
    rows = []
    offered = {case.key for case in all_cases()}
    for case in (*all_cases(), *(case for case in retired_cases() if case.key in mine)):
        attempts = mine.get(case.key, [])
        state = "not started"
        if attempts:
            last = attempts[-1]
            if last.stage != CaseStage.revealed:
                state = "open"
            else:
                state = "solved" if (last.score or {}).get("cause_named") else "missed"
        rows.append(
            {"case": case, "state": state, "attempts": attempts, "offered": case.key in offered}
        )
    return rows
