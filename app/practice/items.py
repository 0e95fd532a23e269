"""What a review item is and asks: the track's questions, a cohort's own, and a learner's misses,
each as a page shows it (the question; after the answer, the model answer, the evidence it rests
on and a way to meet it again in a new form). Keys: "track:<slug>", "cohort:<id>",
"drill-miss:<drill>:<hypothesis shown>", "case-miss:<case>", "code-miss:<exercise>:<check>"
(app/practice/code_items.py)."""

from dataclasses import dataclass, field
from typing import Any

from sqlmodel import Session, col, select

from app.accounts.models import MAX_ROW_ID, Cohort, CohortMembership
from app.cases.models import CaseAttempt
from app.core import limits
from app.core.whole_numbers import whole_number
from app.practice import code_items
from app.practice.drill_links import drill_setup_href
from app.practice.models import CohortReviewItem, ReviewCard, ReviewSource
from app.runs.models import Attempt
from app.web.field_errors import FieldErrors
from drills.cases.outcomes import separates
from drills.cases.registry import UnknownCase, get_case
from drills.core.catalogue import describe
from drills.core.registry import get_drill
from drills.exercises.registry import UnknownExercise
from drills.practice.items import TOPICS, UnknownItem, get_item

TRACK, COHORT, DRILL_MISS, CASE_MISS = "track:", "cohort:", "drill-miss:", "case-miss:"


class UnknownPracticeItem(LookupError):
    def __init__(self, key: str) -> None:
        super().__init__(f"No review item {key!r} for you.")


class InvalidCohortItem(FieldErrors):
    """A cohort's question or its model answer is missing or too long."""


@dataclass(frozen=True)
class Link:
    label: str
    href: str


@dataclass(frozen=True)
class PracticeItem:
    """An item as a page shows it: the question, and after the learner's answer, the model
    answer with the evidence it rests on and a way to meet it again in a new form."""

    key: str
    source: ReviewSource
    topic: str
    prompt: str  # Markdown
    answer: str  # Markdown
    evidence: list[Link] = field(default_factory=list)
    retry: Link | None = None  # a fresh seed of the drill, or a new draw of the case
    retry_is_post: bool = False
    # Graded by the learner's next judged run of the exercise, not by a typed answer.
    graded_by_run: bool = False


def card_of(session: Session, *, learner_id: int, key: str) -> ReviewCard | None:
    return session.exec(
        select(ReviewCard).where(ReviewCard.learner_id == learner_id, ReviewCard.item_key == key)
    ).first()


def _track_item(key: str) -> PracticeItem:
    item = get_item(key.removeprefix(TRACK))
    evidence = [Link(describe(get_drill(slug))["title"], f"/drills/{slug}") for slug in item.drills]
    return PracticeItem(
        key=key,
        source=ReviewSource.track,
        topic=TOPICS.get(item.topic, item.topic),
        prompt=item.prompt,
        answer=item.answer,
        evidence=evidence,
    )


def _drill_miss_item(card: ReviewCard, attempt: Attempt) -> PracticeItem:
    drill = describe(get_drill(attempt.drill_slug))
    texts = {item["key"]: item["text"] for item in drill["hypotheses"]}
    predicted = texts.get(attempt.hypothesis, attempt.hypothesis)
    shown = texts.get(attempt.observed_hypothesis or "", attempt.observed_hypothesis or "")
    # Back with a new seed each time: the same setup, other numbers.
    seed = (attempt.seed + 7919 * (card.reviews + 1)) % limits.MAX_SEED
    return PracticeItem(
        key=card.item_key,
        source=ReviewSource.drill_miss,
        topic=drill["title"],
        prompt=(
            f"In *{drill['title']}* you predicted: “{predicted}” The run showed something "
            "else. What did it show, and which sign in its curves or tables told the two apart?"
        ),
        answer=f"The run showed: **{shown}**" + _measured(drill, attempt),
        evidence=[Link(f"Your run #{attempt.id}", f"/attempts/{attempt.id}")],
        retry=Link(
            "Predict and run the same setup with a new seed",
            drill_setup_href(attempt.drill_slug, seed, attempt.knobs),
        ),
    )


def _measured(drill: dict[str, Any], attempt: Attempt) -> str:
    """The run's own numbers, as a Markdown list: the signs that told the failures apart."""
    signature = attempt.signature or {}
    lines = []
    for item in drill["observations"]:
        value = signature.get(item["key"])
        if isinstance(value, int | float) and not isinstance(value, bool):
            line = f"- {item['label']}: {value:.4g}"
            if line not in lines:
                lines.append(line)
    if not lines:
        return ""
    return "\n\nWhat your run measured:\n\n" + "\n".join(lines[:6])


def _case_miss_item(session: Session, card: ReviewCard, case_attempt: CaseAttempt) -> PracticeItem:
    case = get_case(case_attempt.case_key)
    cause = case.case_set.cause(case_attempt.cause)
    named = case_attempt.named_cause or ""
    named_text = case.case_set.cause(named).text if named else "no cause"
    telling = [
        experiment.title
        for experiment in case.case_set.experiments
        if named and separates(case.case_set, experiment.key, cause.key, [named])
    ]
    answer = f"The cause was: **{cause.text}**"
    if telling:
        answer += "\n\nExperiments that tell it from what you named: " + "; ".join(telling) + "."
    return PracticeItem(
        key=card.item_key,
        source=ReviewSource.case_miss,
        topic=case.title,
        prompt=(
            f"In the case *{case.title}* you named: “{named_text}” The cause was another. "
            "What was it, and which experiment would have told the two apart?"
        ),
        answer=answer,
        evidence=[Link("Your attempt at the case", f"/cases/attempts/{case_attempt.id}")],
        retry=Link("Open the case again (a new draw)", f"/cases/{case.key}/attempts"),
        retry_is_post=True,
    )


def _code_miss_item(session: Session, card: ReviewCard) -> PracticeItem:
    slug = code_items.parts_of(card.item_key)[0]
    texts = code_items.code_miss_texts(session, card)
    evidence = [Link(f"Your run #{card.attempt_id}", f"/exercises/{slug}/runs/{card.attempt_id}")]
    return PracticeItem(
        key=card.item_key,
        source=ReviewSource.code_miss,
        topic=texts.topic,
        prompt=texts.prompt,
        answer=texts.answer,
        evidence=evidence if card.attempt_id is not None else [],
        retry=Link("Write it again from the starter", code_items.fresh_href(slug)),
        graded_by_run=True,
    )


def item_title(key: str) -> str:
    """A short name for any item key, for lists that show many learners' items."""
    try:
        if key.startswith(TRACK):
            return get_item(key.removeprefix(TRACK)).prompt
        if key.startswith(COHORT):
            return "A question from your instructor"
        if key.startswith(DRILL_MISS):
            slug = key.removeprefix(DRILL_MISS).partition(":")[0]
            drill = describe(get_drill(slug))
            # Not what the run showed: the list is read before the learner answers.
            return f"Your missed prediction in {drill['title']}"
        if key.startswith(CASE_MISS):
            return f"Your verdict in the case {get_case(key.removeprefix(CASE_MISS)).title}"
        if key.startswith(code_items.CODE_MISS):
            return code_items.title_of(key)
    except (UnknownItem, UnknownCase, UnknownExercise, KeyError):
        pass
    return key


def cohort_items_for(session: Session, learner_id: int) -> list[CohortReviewItem]:
    """The items the instructors of the learner's cohorts wrote, oldest first."""
    return list(
        session.exec(
            select(CohortReviewItem)
            .join(
                CohortMembership,
                col(CohortMembership.cohort_id) == col(CohortReviewItem.cohort_id),
            )
            .where(CohortMembership.learner_id == learner_id)
            .order_by(col(CohortReviewItem.id))
        ).all()
    )


def _cohort_item(session: Session, learner_id: int, key: str) -> PracticeItem | None:
    """A cohort's item, for its learners only."""
    raw = key.removeprefix(COHORT)
    item_id = whole_number(raw, maximum=MAX_ROW_ID) or 0
    for item in cohort_items_for(session, learner_id):
        if item.id == item_id:
            cohort = session.get(Cohort, item.cohort_id)
            return PracticeItem(
                key=key,
                source=ReviewSource.cohort,
                topic=f"From your cohort {cohort.name}" if cohort else "From your cohort",
                prompt=item.prompt,
                answer=item.answer,
            )
    return None


def practice_item(session: Session, *, learner_id: int, key: str) -> PracticeItem:
    """The item behind `key` for this learner; a miss item is theirs alone."""
    try:
        if key.startswith(TRACK):
            return _track_item(key)
        if key.startswith(COHORT):
            own = _cohort_item(session, learner_id, key)
            if own is not None:
                return own
            raise UnknownPracticeItem(key)
        card = card_of(session, learner_id=learner_id, key=key)
        if card is not None and card.attempt_id is not None and key.startswith(DRILL_MISS):
            attempt = session.get(Attempt, card.attempt_id)
            if attempt is not None:
                return _drill_miss_item(card, attempt)
        if card is not None and card.case_attempt_id is not None and key.startswith(CASE_MISS):
            case_attempt = session.get(CaseAttempt, card.case_attempt_id)
            if case_attempt is not None:
                return _case_miss_item(session, card, case_attempt)
        if card is not None and key.startswith(code_items.CODE_MISS):
            return _code_miss_item(session, card)
    except (UnknownItem, UnknownCase, UnknownExercise, KeyError):
        pass  # an item retired from the track: it is no longer asked
    raise UnknownPracticeItem(key)


def add_cohort_item(
    session: Session, *, cohort: Cohort, author_id: int, prompt: str, answer: str
) -> CohortReviewItem:
    """A review question for the cohort's learners; every problem with it is named at once."""
    errors = {}
    for name, what, text, cap in (
        ("prompt", "question", prompt, limits.MAX_REVIEW_PROMPT),
        ("answer", "model answer", answer, limits.MAX_REVIEW_MODEL_ANSWER),
    ):
        if not text.strip():
            errors[name] = f"Write the {what}."
        elif len(text) > cap:
            errors[name] = f"Keep the {what} under {cap} characters."
    if errors:
        raise InvalidCohortItem.of(errors)
    assert cohort.id is not None
    item = CohortReviewItem(
        cohort_id=cohort.id, author_id=author_id, prompt=prompt.strip(), answer=answer.strip()
    )
    session.add(item)
    session.commit()
    session.refresh(item)
    return item


def cohort_items(session: Session, *, cohort_id: int) -> list[CohortReviewItem]:
    return list(
        session.exec(
            select(CohortReviewItem)
            .where(CohortReviewItem.cohort_id == cohort_id)
            .order_by(col(CohortReviewItem.id))
        ).all()
    )
