"""The case forms read into checked values: the diagnosis and the verdict. A wrong field raises
InvalidCaseInput naming it, before anything is stored."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from app.limits import MAX_DIAGNOSIS_TEXT
from drills.cases.contract import Case
from drills.cases.scoring import Diagnosis

MAX_ALTERNATIVES = 2


class InvalidCaseInput(ValueError):
    """A field of a case form is wrong (422); `field` names it."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field
        self.message = message


def parse_diagnosis(case: Case, fields: Mapping[str, object]) -> Diagnosis:
    """Check every field of the diagnosis form; raise InvalidCaseInput naming the first bad one."""
    causes = {cause.key for cause in case.case_set.causes}
    experiments = {experiment.key for experiment in case.case_set.experiments}
    leading = str(fields.get("leading") or "")
    if leading not in causes:
        raise InvalidCaseInput("leading", "pick your leading hypothesis from the list")
    raw_alternatives = fields.get("alternatives") or []
    if isinstance(raw_alternatives, str):
        raw_alternatives = [raw_alternatives]
    alternatives: list[str] = []
    for item in raw_alternatives if isinstance(raw_alternatives, Sequence) else []:
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
    first_test = str(fields.get("first_test") or "")
    if first_test not in experiments:
        raise InvalidCaseInput("first_test", "pick the first test from the case's experiments")
    texts: dict[str, str] = {}
    for name, what in (("intervention", "the fix you expect"), ("confirmation", "the evidence")):
        text = str(fields.get(name) or "").strip()
        if not text:
            raise InvalidCaseInput(name, f"write {what} before you start experimenting")
        if len(text) > MAX_DIAGNOSIS_TEXT:
            raise InvalidCaseInput(name, f"keep it under {MAX_DIAGNOSIS_TEXT} characters")
        texts[name] = text
    return Diagnosis(
        leading, tuple(alternatives), first_test, texts["intervention"], texts["confirmation"]
    )


@dataclass(frozen=True)
class Verdict:
    cause: str
    fix: str


def parse_verdict(case: Case, fields: Mapping[str, object]) -> Verdict:
    cause = str(fields.get("cause") or "")
    if cause not in {item.key for item in case.case_set.causes}:
        raise InvalidCaseInput("cause", "name the cause from the list")
    fix = str(fields.get("fix") or "")
    if fix not in {item.key for item in case.case_set.fixes}:
        raise InvalidCaseInput("fix", "pick a fix from the list")
    return Verdict(cause, fix)
