"""The track's review items: enough of them, stable and well formed, tied to real drills, and in
our own words rather than the study material's."""

from __future__ import annotations

import re

import pytest

from drills.core.registry import all_drills, get_drill
from drills.practice.items import TOPICS, ReviewItem, UnknownItem, all_items, get_item
from tests.drills import seed_overlap

ITEMS = all_items()


def test_there_are_at_least_30_items_with_unique_slug_keys() -> None:
    assert len(ITEMS) >= 30
    keys = [item.key for item in ITEMS]
    assert len(set(keys)) == len(keys)
    for key in keys:
        assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", key), key


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: item.key)
def test_every_item_asks_something_and_answers_it_in_a_few_sentences(item: ReviewItem) -> None:
    assert item.prompt.strip() and item.prompt == item.prompt.strip()
    assert item.topic in TOPICS
    sentences = [part for part in re.split(r"(?<=[.!?])\s+", item.answer.strip()) if part]
    assert len(sentences) >= 2, item.answer
    assert len(seed_overlap.words(item.answer)) >= 25, item.answer


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: item.key)
def test_every_item_links_drills_that_exist(item: ReviewItem) -> None:
    assert item.drills
    assert len(set(item.drills)) == len(item.drills)
    for slug in item.drills:
        assert get_drill(slug).slug == slug


def test_every_drill_has_something_to_review_and_every_topic_is_asked_about() -> None:
    linked = {slug for item in ITEMS for slug in item.drills}
    assert linked == {drill.slug for drill in all_drills()}
    assert {item.topic for item in ITEMS} == set(TOPICS)


@pytest.mark.parametrize("item", ITEMS, ids=lambda item: item.key)
def test_no_item_copies_a_run_of_words_from_the_study_material(item: ReviewItem) -> None:
    assert seed_overlap.shared_runs(item.prompt) == set()
    assert seed_overlap.shared_runs(item.answer) == set()


def test_the_overlap_check_would_catch_a_copied_sentence() -> None:
    # A sentence of the packet's, as it stands there (the fingerprints hold it, not the text).
    copied = (
        "Before memorizing individual curve shapes, memorize this sequence. "
        "Step 1: Confirm that the curves are comparable"
    )
    assert seed_overlap.shared_runs(copied)
    reworded = "Learn the order of the checks before you learn what each curve looks like."
    assert seed_overlap.shared_runs(reworded) == set()


def test_items_are_found_by_key() -> None:
    assert get_item("none-versus-zero-gradient").topic == "gradients"
    with pytest.raises(UnknownItem, match="no-such-item"):
        get_item("no-such-item")
