"""The diagnosis form read into a checked Diagnosis: a leading hypothesis, up to two
alternatives, the first test, the fix expected and the evidence that would confirm it. Wrong
fields raise one InvalidCaseInput naming each, before anything is stored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from app.core.limits import MAX_DIAGNOSIS_TEXT
from app.web.field_errors import ErrorCollector, FieldErrors
from drills.cases.contract import CaseSet
from drills.cases.scoring import Diagnosis

MAX_ALTERNATIVES = 2


class InvalidCaseInput(FieldErrors):
    """Fields of a case form are wrong (422); `errors` names each."""


def parse_diagnosis(
    case_set: CaseSet, fields: Mapping[str, object], *, before: str = "you start experimenting"
) -> Diagnosis:
    """Check every field of the diagnosis form (a case's, or a curve-diagnosis round's, over the
    causes and experiments of its case set); raise InvalidCaseInput naming each bad one."""
    problems = ErrorCollector()
    causes = {cause.key for cause in case_set.causes}
    experiments = {experiment.key for experiment in case_set.experiments}
    leading = str(fields.get("leading") or "")
    if leading not in causes:
        problems.add("leading", "pick your leading hypothesis from the list")
    with problems.checking():
        alternatives = _alternatives(causes, leading, fields.get("alternatives") or [])
    first_test = str(fields.get("first_test") or "")
    if first_test not in experiments:
        problems.add("first_test", "pick the first test from the list of experiments")
    texts: dict[str, str] = {}
    for name, what in (("intervention", "the fix you expect"), ("confirmation", "the evidence")):
        text = str(fields.get(name) or "").strip()
        if not text:
            problems.add(name, f"write {what} before {before}")
        elif len(text) > MAX_DIAGNOSIS_TEXT:
            problems.add(name, f"keep it under {MAX_DIAGNOSIS_TEXT} characters")
        texts[name] = text
    problems.raise_if_any(InvalidCaseInput)
    return Diagnosis(
        leading, tuple(alternatives), first_test, texts["intervention"], texts["confirmation"]
    )


def _alternatives(causes: set[str], leading: str, raw: object) -> list[str]:
    items = [raw] if isinstance(raw, str) else raw if isinstance(raw, Sequence) else []
    alternatives: list[str] = []
    for item in items:
        key = str(item)
        if key not in causes:
            raise InvalidCaseInput("alternatives", "an alternative is not one of the case's causes")
        if key == leading:
            raise InvalidCaseInput(
                "alternatives", "an alternative must differ from your leading hypothesis"
            )
        if key not in alternatives:
            alternatives.append(key)
    if len(alternatives) > MAX_ALTERNATIVES:
        raise InvalidCaseInput("alternatives", f"name at most {MAX_ALTERNATIVES} alternatives")
    return alternatives
