"""The assignment form read and checked whole: a title, a due date-time in UTC, and the items
(a checkbox per drill, case and exercise, named "<kind>:<key>", and a number of curve rounds).
Every problem is reported at once, by field, and nothing is stored while any remains."""

from dataclasses import dataclass, field
from datetime import UTC, datetime

from app.assignments.items import MAX_ROUNDS, Item, ItemKind, titles
from app.assignments.models import MAX_ITEMS, MAX_TITLE
from app.web.field_errors import ErrorCollector, FieldErrors

CHECKED = "on"
# A due date before this or after that is a typing slip, not a plan.
EARLIEST_DUE = datetime(2000, 1, 1, tzinfo=UTC)
LATEST_DUE = datetime(2100, 1, 1, tzinfo=UTC)


class InvalidAssignment(FieldErrors):
    """A field of the assignment form is missing or wrong."""


@dataclass(frozen=True)
class AssignmentForm:
    title: str
    due_at: datetime
    items: list[Item] = field(default_factory=list)


def parse_due(text: str) -> datetime:
    """A browser's datetime-local value ("2026-12-18T17:00"), read as UTC; an ISO 8601 moment
    with an offset is converted to UTC."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise InvalidAssignment(
            "due", "give the due date and time as YYYY-MM-DD HH:MM (UTC)"
        ) from None
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    if not EARLIEST_DUE <= moment < LATEST_DUE:
        raise InvalidAssignment("due", "the due date must be between the years 2000 and 2099")
    return moment


def parse_rounds(text: str) -> int:
    text = text.strip()
    if not text:
        return 0
    if not text.isascii() or not text.isdigit() or int(text) > MAX_ROUNDS:
        raise InvalidAssignment(
            "rounds", f"the number of curve rounds must be a whole number from 0 to {MAX_ROUNDS}"
        )
    return int(text)


def parse_items(fields: dict[str, str]) -> list[Item]:
    known = titles()
    chosen: list[Item] = []
    for name, value in fields.items():
        kind, colon, key = name.partition(":")
        if not colon or kind not in (ItemKind.drill, ItemKind.case, ItemKind.exercise):
            continue  # not an item's checkbox (title, due, csrf_token, ...)
        item = Item(ItemKind(kind), key)
        if item not in known:
            raise InvalidAssignment("items", f"there is no {kind} called {key!r}")
        if value == CHECKED:
            chosen.append(item)
    order = {item: index for index, item in enumerate(known)}
    return sorted(chosen, key=order.__getitem__)  # catalogue order, whatever the post's order


def parse_assignment(fields: dict[str, str]) -> AssignmentForm:
    problems = ErrorCollector()
    title = fields.get("title", "").strip()
    if not title or len(title) > MAX_TITLE:
        problems.add("title", f"give the assignment a title (at most {MAX_TITLE} characters)")
    due_at = EARLIEST_DUE
    with problems.checking():
        due_at = parse_due(fields.get("due", ""))
    items: list[Item] = []
    with problems.checking():
        items = parse_items(fields)
    with problems.checking():
        rounds = parse_rounds(fields.get("rounds", ""))
        if rounds:
            items.append(Item(ItemKind.rounds, str(rounds)))
    if "items" not in problems.errors and "rounds" not in problems.errors:
        if not items:
            problems.add("items", "choose at least one drill, case, exercise or curve round")
        elif len(items) > MAX_ITEMS:
            problems.add("items", f"an assignment holds at most {MAX_ITEMS} items")
    problems.raise_if_any(InvalidAssignment)
    return AssignmentForm(title=title, due_at=due_at, items=items)
