"""A failed check of the learner's own code as a review item ("code-miss:<exercise>:<check>").

Its review is not typed: the item sends the learner back to the exercise afresh (its starter,
not their last code) to write it again from memory, and their next judged run of it grades the
item (app/practice/misses.py). The page shows the question and the way back, never a rating form.
"""

from dataclasses import dataclass

from sqlmodel import Session, select

from app.exercises.models import ExerciseRun
from app.practice.models import ReviewCard
from drills.exercises.contract import Exercise
from drills.exercises.registry import get_exercise

CODE_MISS = "code-miss:"


def code_miss_key(exercise_slug: str, check_key: str) -> str:
    return f"{CODE_MISS}{exercise_slug}:{check_key}"


def parts_of(key: str) -> tuple[str, str]:
    """(exercise slug, check key) of a code-miss item's key."""
    slug, _colon, check = key.removeprefix(CODE_MISS).partition(":")
    return slug, check


def check_title(exercise: Exercise, check_key: str) -> str:
    for check in exercise.checks:
        if check.key == check_key:
            return check.title
    return check_key


def fresh_href(exercise_slug: str) -> str:
    return f"/exercises/{exercise_slug}?fresh=1"


def title_of(key: str) -> str:
    """The item's name in a list (raises UnknownExercise for a retired exercise)."""
    return f"Your failed check in the exercise {get_exercise(parts_of(key)[0]).title}"


@dataclass(frozen=True)
class CodeMissTexts:
    topic: str  # the exercise's title
    prompt: str  # Markdown
    answer: str  # Markdown


def code_miss_texts(session: Session, card: ReviewCard) -> CodeMissTexts:
    """What the item says (raises UnknownExercise for a retired exercise)."""
    slug, check = parts_of(card.item_key)
    exercise = get_exercise(slug)
    title = check_title(exercise, check)
    message = ""
    if card.attempt_id is not None:
        run = session.exec(
            select(ExerciseRun).where(ExerciseRun.attempt_id == card.attempt_id)
        ).first()
        for result in (run.checks or []) if run else []:
            if isinstance(result, dict) and result.get("key") == check:
                message = str(result.get("message") or "")
    answer = f"The check: **{title}**"
    if message:
        answer += f"\n\nWhat the judge said of your run: {message}"
    return CodeMissTexts(
        topic=exercise.title,
        prompt=(
            f"In the exercise *{exercise.title}* your code failed the check “{title}”. "
            "Write the exercise again from memory, from its starter, until every check passes: "
            "your next run of it grades this item."
        ),
        answer=answer,
    )
