"""Pages one feature owns and another adds to (app/web/pages.py, app/page_hooks.py): parts are
merged in order and each sees what came before; installing twice leaves each part once; a page
nobody registered is refused by name; and the web app installs grading's parts on the case and
round pages."""

from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.web import pages


def test_parts_merge_in_order_and_each_sees_what_came_before() -> None:
    def first(session: Any, subject: Any, viewer: Any, context: dict[str, Any]) -> dict[str, Any]:
        return {"seen": [context["owner"]], "a": 1}

    def second(session: Any, subject: Any, viewer: Any, context: dict[str, Any]) -> dict[str, Any]:
        return {"seen": [*context["seen"], context["a"]], "b": 2}

    pages.add_part("test-page", "first", first)
    pages.add_part("test-page", "second", second)
    pages.add_part("test-page", "first", first)  # again: replaced, not added
    assert pages.part_names("test-page") == ["first", "second"]
    added = pages.parts_context("test-page", None, None, None, {"owner": True})  # type: ignore[arg-type]
    assert added == {"seen": [True, 1], "a": 1, "b": 2}
    assert pages.parts_context("no-parts", None, None, None, {}) == {}  # type: ignore[arg-type]


def test_a_page_nobody_registered_is_refused_by_name() -> None:
    with pytest.raises(pages.UnknownPage, match="no-such-page"):
        pages.render("no-such-page", None, None, None)  # type: ignore[arg-type]


def test_the_web_app_installs_grading_on_the_case_and_round_pages(client: TestClient) -> None:
    for page in ("case", "round"):
        assert pages.part_names(page) == ["grading: the review, revisions and the queue"]
        assert page in pages.page_names()
