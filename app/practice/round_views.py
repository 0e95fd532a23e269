"""What a round's pages show. Before the answer: the run's curves under the case set's neutral
names, the numbers its symptom shows, and the diagnosis form with causes as opaque values; no
drill, knob, seed or command. After it: the planted cause, the drill and its knobs, the replay
command, the learner's diagnosis beside the model answer, and the score."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, col, select

from app.accounts.models import User
from app.diagnosis import shown
from app.practice import rounds
from app.practice.drill_links import drill_setup_href
from app.practice.round_models import DiagnosisRound, RoundReview
from app.runs import evidence
from app.runs.models import Attempt
from drills.cases import evidence as case_evidence
from drills.cases.contract import FAMILIES
from drills.cases.outcomes import reading
from drills.core.registry import UnknownDrill, get_drill
from drills.core.source import training_source
from drills.core.source_diff import source_diff
from drills.practice.round_answers import MAX_POINTS, cause_of, fixed_setup, model_answer


def run_context(session: Session, diagnosis_round: DiagnosisRound) -> dict[str, Any]:
    case_set = rounds.case_set_for(diagnosis_round)
    run = rounds.run_of(session, diagnosis_round)
    assert run is not None and run.id is not None
    series, _ = evidence.series_and_cursor(session, attempt_id=run.id)
    rename = shown.rename_for(case_set)
    shown_series = {
        label: points for name, points in series.items() if (label := rename(name)) is not None
    }
    visible = None
    if run.final:
        visible = case_evidence.visible(case_set, None, shown.stored_record(run))
    return {
        "run": run,
        "series": shown_series,
        # Its stream counts shown points (app/runs/streams.py): a point id would count hidden ones.
        "cursor": sum(len(points) for points in shown_series.values()),
        "shown": visible,
        "void": rounds.is_void(run),
    }


def round_page_context(session: Session, diagnosis_round: DiagnosisRound) -> dict[str, Any]:
    case_set = rounds.case_set_for(diagnosis_round)
    answered = diagnosis_round.answered_at is not None
    context: dict[str, Any] = {
        "diagnosis_round": diagnosis_round,
        "charts": shown.chart_specs(case_set),
        "causes": shown.cause_options(case_set),
        "experiments": case_set.experiments,
        "answered": answered,
    }
    context |= run_context(session, diagnosis_round)
    if answered:
        context |= reveal_context(diagnosis_round, context["run"])
    return context


def reveal_context(diagnosis_round: DiagnosisRound, run: Attempt) -> dict[str, Any]:
    variant = rounds.variant_of(diagnosis_round)
    case_set = rounds.case_set_for(diagnosis_round)
    drill = get_drill(diagnosis_round.drill_slug)
    texts = {item.key: item.text for item in case_set.causes}
    experiments = {item.key: item for item in case_set.experiments}
    hypotheses = {item.key: item.text for item in drill.hypotheses}
    diagnosis = diagnosis_round.diagnosis or {}
    score = diagnosis_round.score or {}
    model = model_answer(variant)
    first_test = experiments.get(diagnosis.get("first_test", ""))
    considered = [diagnosis.get("leading", ""), *diagnosis.get("alternatives", [])]
    cause = cause_of(variant)
    fixed = fixed_setup(variant, diagnosis_round.knobs)
    return {
        "truth": {
            "cause": cause.text,
            "family": FAMILIES[cause.family],
            "drill": drill,
            # The knobs the cause planted, then every knob of the run.
            "planted": {name: diagnosis_round.knobs.get(name) for name in cause.knobs},
            "knobs": diagnosis_round.knobs,
            "seed": diagnosis_round.seed,
            "command": run.command,
            "observed": hypotheses.get(score.get("observed", ""), score.get("observed", "")),
            "try_href": drill_setup_href(drill.slug, diagnosis_round.seed, diagnosis_round.knobs),
        },
        "score": score,
        "max_points": MAX_POINTS,
        # Answered only: what the model fix changes in the run's code, then that code with the
        # planted cause's lines marked.
        "code_diff": source_diff(drill, diagnosis_round.knobs, fixed.knobs),
        "diff_against_defaults": not fixed.by_model_fix,
        "code_files": training_source(drill, diagnosis_round.knobs),
        # The five parts, the learner's beside the model's.
        "parts": [
            ("Leading hypothesis", texts.get(diagnosis.get("leading", ""), ""), model.leading.text),
            (
                "Alternatives",
                "; ".join(texts.get(key, key) for key in diagnosis.get("alternatives", []))
                or "none",
                "; ".join(item.text for item in model.alternatives),
            ),
            (
                "First test",
                first_test.title if first_test else "",
                model.first_test.title if model.first_test else "no single experiment",
            ),
            ("Expected fix", diagnosis.get("intervention", ""), model.intervention.text),
            ("Evidence the fix worked", diagnosis.get("confirmation", ""), model.confirmation),
        ],
        "would_have": [
            experiments[k].title for k in score.get("would_have", []) if k in experiments
        ],
        # What the learner's first test reads under each cause they weighed, from real runs.
        "readings": [
            (texts.get(key, key), reading(case_set, key, first_test.key))
            for key in considered
            if key and first_test
        ],
    }


def _drill_title(slug: str) -> str:
    try:
        return get_drill(slug).title
    except UnknownDrill:  # retired since: the record still stands
        return slug


def round_rows(session: Session, *, learner_id: int) -> list[dict[str, Any]]:
    """The learner's rounds, newest first: the drill and score only once answered; a round whose
    run came to nothing says so."""
    reviewed = set(
        session.exec(
            select(RoundReview.round_id)
            .join(DiagnosisRound, col(DiagnosisRound.id) == col(RoundReview.round_id))
            .where(DiagnosisRound.learner_id == learner_id)
        ).all()
    )
    found = session.exec(
        select(DiagnosisRound, Attempt)
        .join(Attempt, col(Attempt.round_id) == col(DiagnosisRound.id))
        .where(DiagnosisRound.learner_id == learner_id)
        .order_by(col(DiagnosisRound.id).desc())
    ).all()
    rows = []
    for item, run in found:
        answered = item.answered_at is not None
        rows.append(
            {
                "round": item,
                "answered": answered,
                "void": not answered and rounds.is_void(run),
                "drill": _drill_title(item.drill_slug) if answered else None,
                "score": item.score if answered else None,
                "reviewed": item.id in reviewed,
            }
        )
    return rows


def viewer_context(viewer: User | None, diagnosis_round: DiagnosisRound) -> dict[str, Any]:
    """Whether the viewer is the round's learner, who alone sees its forms (an instructor's
    review of it is grading's part of the page: app/grading/page_parts.py)."""
    return {"owner": viewer is not None and viewer.id == diagnosis_round.learner_id}
