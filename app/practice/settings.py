"""A learner's practice settings: whether their streak is shown (app/practice/models.py).

The form sends the value wanted, never "toggle", so a double submit or two tabs end in the
same state."""

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, select

from app.practice.models import PracticeSettings
from app.web.field_errors import FieldErrors

CHOICES = {"yes": True, "no": False}


class InvalidSetting(FieldErrors):
    """A setting's value is not one the form offers: 422."""


def _row(session: Session, learner_id: int) -> PracticeSettings | None:
    query = select(PracticeSettings).where(PracticeSettings.learner_id == learner_id)
    return session.exec(query).first()


def shows_streak(session: Session, *, learner_id: int) -> bool:
    row = _row(session, learner_id)
    return row.show_streak if row is not None else True


def set_show_streak(session: Session, *, learner_id: int, choice: str) -> bool:
    """Store the choice ("yes" or "no") and return it as a bool."""
    if choice not in CHOICES:
        raise InvalidSetting("show", "Say whether to show your streak: yes or no.")
    show = CHOICES[choice]
    row = _row(session, learner_id)
    if row is None:
        session.add(PracticeSettings(learner_id=learner_id, show_streak=show))
        try:
            session.commit()
            return show
        except IntegrityError:  # a twin request made the row first: set it on that one
            session.rollback()
            row = _row(session, learner_id)
            assert row is not None
    row.show_streak = show
    session.add(row)
    session.commit()
    return show
