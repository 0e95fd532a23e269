"""What a review item is: a question a learner answers from memory, its model answer, and the
drills whose runs show it. The track's items themselves are in drills/practice/track/."""

from __future__ import annotations

from dataclasses import dataclass

from drills.cases.contract import FAMILIES

# What an item is about: the packet's root-cause families (shared with the cases), plus the
# method itself (how to run a diagnosis, whatever the cause turns out to be).
TOPICS: dict[str, str] = {**FAMILIES, "method": "How to run a diagnosis"}


@dataclass(frozen=True)
class ReviewItem:
    key: str  # stable slug
    topic: str  # a key of TOPICS
    prompt: str  # the question, one or two sentences
    answer: str  # the model answer, Markdown, a few sentences
    drills: tuple[str, ...]  # slugs of the drills whose runs show it (the evidence to link)


class UnknownItem(KeyError):
    def __init__(self, key: str) -> None:
        super().__init__(f"unknown review item {key!r}")
        self.key = key

    def __str__(self) -> str:
        return str(self.args[0])
