"""Where a learner stands on an assignment, from when they did each item and the due date.

Work is never refused for being late: an item done after the due date is "done late", and an
assignment finished after it is "late". Until every item is done the assignment is "open" before
the due date and "overdue" after it (the gradebook calls that "missing").
"""

from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from app.assignments.completion import Completions
from app.assignments.items import Item, from_stored
from app.assignments.models import Assignment
from app.models.time import as_utc


class ItemState(StrEnum):
    done = "done"
    done_late = "done late"
    not_yet = "not yet"


class AssignmentState(StrEnum):
    done = "done"
    late = "late"
    open = "open"
    overdue = "overdue"


# The gradebook's words: the issue asks for done / late / missing.
GRADEBOOK_WORDS = {
    AssignmentState.done: "done",
    AssignmentState.late: "late",
    AssignmentState.open: "not due yet",
    AssignmentState.overdue: "missing",
}


@dataclass(frozen=True)
class ItemStanding:
    item: Item
    state: ItemState
    done_at: datetime | None


@dataclass(frozen=True)
class Standing:
    assignment: Assignment
    items: list[ItemStanding]
    state: AssignmentState
    finished_at: datetime | None  # when the last item was done, once all are

    @property
    def done_count(self) -> int:
        return sum(item.state != ItemState.not_yet for item in self.items)


def standing(assignment: Assignment, done: Completions, *, now: datetime) -> Standing:
    due = as_utc(assignment.due_at)
    items = []
    for item in from_stored(assignment.items):
        when = done.when(item)
        if when is None:
            state = ItemState.not_yet
        else:
            state = ItemState.done if when <= due else ItemState.done_late
        items.append(ItemStanding(item, state, when))
    times = [item.done_at for item in items if item.done_at is not None]
    if len(times) == len(items):
        finished = max(times) if times else as_utc(assignment.created_at)
        whole = AssignmentState.done if finished <= due else AssignmentState.late
        return Standing(assignment, items, whole, finished)
    overdue = as_utc(now) > due
    return Standing(
        assignment, items, AssignmentState.overdue if overdue else AssignmentState.open, None
    )
