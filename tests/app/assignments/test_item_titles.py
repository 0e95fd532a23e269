"""How an assignment's items read once the catalogue has moved on (app/assignments/items.py)."""

from app.assignments.items import Item, ItemKind, title_of
from drills.cases.registry import all_cases, retired_cases


def test_an_offered_case_reads_as_its_title() -> None:
    case = all_cases()[0]
    assert title_of(Item(ItemKind.case, case.key)) == case.title


def test_a_retired_case_keeps_its_title_and_says_it_cannot_be_started() -> None:
    """The instructor who set it learns why a learner who follows it is turned away."""
    (case, *_) = retired_cases()  # a-quick-sweep, retired on 2026-12-04
    title = title_of(Item(ItemKind.case, case.key))
    assert title.startswith(case.title)
    assert "no longer offered" in title


def test_an_item_gone_from_the_catalogue_keeps_its_key() -> None:
    assert title_of(Item(ItemKind.case, "never-was")) == "never-was (no longer in the catalogue)"
