"""The learner's explain-back of a finished attempt. Each save is a new row, so history is kept."""

from collections.abc import Mapping

from sqlmodel import Session

from app.core.limits import MAX_EXPLAIN_BACK
from app.grading.submissions import EXPLANATION_FIELDS
from app.runs.models import Attempt, Explanation


class InvalidExplanation(ValueError):
    """`errors` maps each bad field to what is wrong; `draft` is the text to show again."""

    def __init__(self, errors: dict[str, str], draft: dict[str, str]) -> None:
        super().__init__("; ".join(f"{name}: {message}" for name, message in errors.items()))
        self.errors = errors
        self.draft = draft


def explain_back(
    session: Session,
    *,
    attempt: Attempt,
    learner_id: int,
    fields: Mapping[str, str],
) -> Explanation:
    values = {name: fields.get(name, "").strip() for name in EXPLANATION_FIELDS}
    errors = {
        name: "required" if not value else f"longer than {MAX_EXPLAIN_BACK} characters"
        for name, value in values.items()
        if not value or len(value) > MAX_EXPLAIN_BACK
    }
    if not attempt.final:
        errors["mechanism"] = "wait until the run has finished, then explain what you saw"
    if errors:
        raise InvalidExplanation(errors, values)
    assert attempt.id is not None
    explanation = Explanation(
        attempt_id=attempt.id,
        learner_id=learner_id,
        mechanism=values["mechanism"],
        right_tool=values["right_tool"],
        wrong_tool=values["wrong_tool"],
        next_check=values["next_check"],
    )
    session.add(explanation)
    session.commit()
    session.refresh(explanation)
    return explanation
