"""What the attempt templates need, gathered in one place for the page and its partials."""

from typing import Any

from sqlmodel import Session

from app import evidence
from app.models import Attempt
from drills.catalogue import describe
from drills.registry import get_drill


def attempt_context(session: Session, attempt: Attempt) -> dict[str, Any]:
    assert attempt.id is not None
    drill = describe(get_drill(attempt.drill_slug))
    hypotheses = {item["key"]: item["text"] for item in drill["hypotheses"]}
    signature = attempt.signature or {}
    observations = [
        {
            "label": item["label"],
            "value": signature.get(item["key"]),
            "reference": signature.get(item["reference"]) if item["reference"] else None,
        }
        for item in drill["observations"]
        if item["key"] in signature
    ]
    return {
        "attempt": attempt,
        "drill": drill,
        "series": evidence.metric_series(session, attempt_id=attempt.id),
        "predicted_text": hypotheses.get(attempt.hypothesis, attempt.hypothesis),
        "observed_text": hypotheses.get(attempt.observed_hypothesis or "", None),
        "observations": observations,
        "parameters": (attempt.diagnostics or {}).get("parameters", []),
        "explanation": evidence.latest_explanation(session, attempt_id=attempt.id),
        "explanation_errors": {},
    }
