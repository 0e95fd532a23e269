"""What an assignment can ask for, taken from the catalogues the app already has.

An item is a (kind, key) pair:
- "drill": a drill's slug; done once its work is handed in (see app/assignments/completion.py);
- "case": a case's key; done once solved;
- "exercise": a code exercise's slug; done once a run passed;
- "rounds": a number N (1 to MAX_ROUNDS) as text; done once N curve rounds are answered.
Rounds are drawn for each learner (app/practice/rounds.py), so an assignment can ask how many,
never which one.
"""

from dataclasses import dataclass
from enum import StrEnum

from drills.cases.registry import all_cases, retired_cases
from drills.core.registry import all_drills
from drills.exercises.registry import all_exercises

MAX_ROUNDS = 10


class ItemKind(StrEnum):
    drill = "drill"
    case = "case"
    exercise = "exercise"
    rounds = "rounds"


@dataclass(frozen=True)
class Item:
    kind: ItemKind
    key: str

    @property
    def field(self) -> str:
        """The item's checkbox on the assignment form (rounds have a number field instead)."""
        return f"{self.kind}:{self.key}"

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind.value, "key": self.key}


@dataclass(frozen=True)
class Choice:
    """One item the form offers, with the title a person reads."""

    item: Item
    title: str


def choices() -> dict[ItemKind, list[Choice]]:
    """Every drill, case and code exercise in catalogue order, by kind."""
    return {
        ItemKind.drill: [Choice(Item(ItemKind.drill, d.slug), d.title) for d in all_drills()],
        ItemKind.case: [Choice(Item(ItemKind.case, c.key), c.title) for c in all_cases()],
        ItemKind.exercise: [
            Choice(Item(ItemKind.exercise, e.slug), e.title) for e in all_exercises()
        ],
    }


def titles() -> dict[Item, str]:
    return {choice.item: choice.title for kind in choices().values() for choice in kind}


def title_of(item: Item, known: dict[Item, str] | None = None) -> str:
    """The item as a person reads it. A retired case keeps its title and says that it can no
    longer be started (an attempt already open at it goes on); any other item that has left
    the catalogue keeps its key."""
    if item.kind == ItemKind.rounds:
        count = int(item.key)
        return f"Answer {count} curve round{'s' if count != 1 else ''}"
    found = (known if known is not None else titles()).get(item)
    if found is not None:
        return found
    if item.kind == ItemKind.case:
        for case in retired_cases():
            if case.key == item.key:
                return f"{case.title} (no longer offered: only an attempt already open goes on)"
    return f"{item.key} (no longer in the catalogue)"


def from_stored(rows: list[dict[str, str]]) -> list[Item]:
    return [Item(ItemKind(row["kind"]), row["key"]) for row in rows]
