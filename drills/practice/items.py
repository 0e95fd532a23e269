"""The track's review items: questions a learner answers from memory, each with a model answer
and the drills whose runs show the answer.

Written for Drillbook from the track's study material (the study card's review prompt, the
diagnosis packet's flashcards, debugging sequence and curve cases), in our own words. A key is
stable: a learner's schedule and review log point at it, so a key is never renamed or reused;
an item that should go away is retired by the app, not deleted here.
"""

from drills.practice.review_item import TOPICS, ReviewItem, UnknownItem
from drills.practice.track import (
    data_and_forward,
    evaluation,
    graph_and_gradients,
    loss,
    method,
    optimizer,
)

__all__ = ["ITEMS", "TOPICS", "ReviewItem", "UnknownItem", "all_items", "get_item"]

# In the order a learner meets them: new items are introduced a few a day from the front.
ITEMS: tuple[ReviewItem, ...] = (
    method.ITEMS
    + data_and_forward.ITEMS
    + loss.ITEMS
    + graph_and_gradients.ITEMS
    + optimizer.ITEMS
    + evaluation.ITEMS
)


def all_items() -> tuple[ReviewItem, ...]:
    return ITEMS


def get_item(key: str) -> ReviewItem:
    for item in ITEMS:
        if item.key == key:
            return item
    raise UnknownItem(key)
