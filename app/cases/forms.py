"""The case's verdict form read into checked values (the diagnosis form is app/diagnosis's).
Wrong fields raise one InvalidCaseInput naming each, before anything is stored."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.diagnosis.form import InvalidCaseInput
from app.web.field_errors import ErrorCollector
from drills.cases.contract import Case


@dataclass(frozen=True)
class Verdict:
    cause: str
    fix: str


def parse_verdict(case: Case, fields: Mapping[str, object]) -> Verdict:
    problems = ErrorCollector()
    cause = str(fields.get("cause") or "")
    if cause not in {item.key for item in case.case_set.causes}:
        problems.add("cause", "name the cause from the list")
    fix = str(fields.get("fix") or "")
    if fix not in {item.key for item in case.case_set.fixes}:
        problems.add("fix", "pick a fix from the list")
    problems.raise_if_any(InvalidCaseInput)
    return Verdict(cause, fix)
