"""The cohort page's grids and the CSV behind them (issue 30, point 5): every grid scrolls in a
labelled region a keyboard can reach, with the learner's name in a sticky first column, and the
CSV holds the cases and code exercises beside the drills, one row per learner."""

import csv
import io
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.accounts.models import Role
from app.cases.models import CaseStage
from app.core.config import Settings
from app.main import create_app
from drills.cases.registry import all_cases
from drills.core.registry import all_drills
from drills.exercises.registry import all_exercises
from tests.app.factories import (
    EXERCISE,
    add_case_attempt,
    add_cohort,
    add_exercise_run,
    add_user,
    signed_in,
)

CASE = "a-fresh-head"  # the case add_case_attempt starts
GRIDS = {
    "cohort-grid": "Learners by drill",
    "case-grid": "Learners by case",
    "exercise-grid": "Learners by code exercise",
}


@pytest.fixture
def cohort(make_settings: Callable[..., Settings]) -> Iterator[dict[str, Any]]:
    """A cohort of three: ann solved the case and passed the exercise, bob has the case open and
    failed the exercise, and cy, whose display name reads as a formula, has done neither."""
    app = create_app(make_settings())
    with TestClient(app):
        engine = app.state.engine
        teacher = add_user(engine, "ida", Role.instructor)
        ann, bob = add_user(engine, "ann"), add_user(engine, "bob")
        cy = add_user(engine, "cy", display_name="=HYPERLINK(1)")
        cohort_id = add_cohort(
            engine, teacher, name="Autumn", code="ABCDEFGH", learners=[ann, bob, cy]
        )
        add_case_attempt(engine, ann)
        add_exercise_run(engine, ann, judgement="passed")
        add_case_attempt(engine, bob, stage=CaseStage.diagnosing)
        add_exercise_run(engine, bob, judgement="failed")
        yield {"cohort": cohort_id, "instructor": signed_in(app, "ida"), "engine": engine, "cy": cy}


def test_the_csv_has_a_column_per_drill_case_and_exercise(cohort: dict[str, Any]) -> None:
    response = cohort["instructor"].get(f"/cohorts/{cohort['cohort']}/progress.csv")
    assert response.status_code == 200
    rows = list(csv.reader(io.StringIO(response.text)))
    assert rows[0] == [
        "username",
        "display_name",
        *(drill.slug for drill in all_drills()),
        *(f"case:{case.key}" for case in all_cases()),
        *(f"exercise:{exercise.slug}" for exercise in all_exercises()),
        "solution shown",
    ]
    by_name = {row[0]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}
    assert list(by_name) == ["ann", "bob", "cy"]
    assert by_name["ann"][f"case:{CASE}"] == "solved 4/4"
    assert by_name["bob"][f"case:{CASE}"] == "open"
    assert by_name["cy"][f"case:{CASE}"] == "not started"
    assert by_name["ann"][f"exercise:{EXERCISE}"] == "passed"
    assert by_name["bob"][f"exercise:{EXERCISE}"] == "failed"
    assert by_name["cy"][f"exercise:{EXERCISE}"] == "not started"
    # Every other case is untouched by all three.
    others = [f"case:{case.key}" for case in all_cases() if case.key != CASE]
    assert {row[key] for row in by_name.values() for key in others} == {"not started"}


def test_a_retired_case_keeps_its_column_while_someone_has_tried_it(
    cohort: dict[str, Any],
) -> None:
    """a-quick-sweep draws no new attempts; one made before it was retired still shows."""
    header = cohort["instructor"].get(f"/cohorts/{cohort['cohort']}/progress.csv").text
    assert "case:a-quick-sweep" not in header.splitlines()[0]
    add_case_attempt(
        cohort["engine"], cohort["cy"], case_key="a-quick-sweep", cause="all-rates-too-large"
    )
    response = cohort["instructor"].get(f"/cohorts/{cohort['cohort']}/progress.csv")
    rows = list(csv.reader(io.StringIO(response.text)))
    by_name = {row[0]: dict(zip(rows[0], row, strict=True)) for row in rows[1:]}
    assert by_name["cy"]["case:a-quick-sweep"].startswith("solved")
    assert by_name["ann"]["case:a-quick-sweep"] == "not started"
    page = cohort["instructor"].get(f"/cohorts/{cohort['cohort']}")
    assert page.status_code == 200 and "A sweep with no rate to use" in page.text


def test_no_csv_cell_reads_as_a_formula(cohort: dict[str, Any]) -> None:
    response = cohort["instructor"].get(f"/cohorts/{cohort['cohort']}/progress.csv")
    rows = list(csv.reader(io.StringIO(response.text)))
    assert [row[1] for row in rows if row[0] == "cy"] == ["'=HYPERLINK(1)"]
    for row in rows:
        for cell in row:
            assert not cell.startswith(("=", "+", "-", "@", "\t", "\r")), cell


@dataclass
class Grid:
    region: dict[str, str | None]  # the attributes of the element the table scrolls in
    first_cells: list[tuple[str, dict[str, str | None], str]] = field(default_factory=list)


class _Grids(HTMLParser):
    """Each table.grid by id: its scroll region's attributes, and each row's first cell (tag,
    attributes, text)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.grids: dict[str, Grid] = {}
        self._parent: dict[str, str | None] = {}
        self._grid: Grid | None = None
        self._cell: tuple[str, dict[str, str | None], list[str]] | None = None
        self._row_started = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag == "div":
            self._parent = values
        elif tag == "table" and "grid" in (values.get("class") or "").split():
            self._grid = self.grids[values.get("id") or ""] = Grid(region=self._parent)
        elif self._grid is not None and tag == "tr":
            self._row_started = True
        elif self._grid is not None and tag in ("th", "td") and self._row_started:
            self._row_started = False
            self._cell = (tag, values, [])

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell[2].append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._grid = None
        elif self._cell is not None and tag == self._cell[0] and self._grid is not None:
            name, attrs, text = self._cell
            self._grid.first_cells.append((name, attrs, " ".join("".join(text).split())))
            self._cell = None


def test_each_grid_scrolls_in_a_labelled_region_with_the_names_sticky(
    cohort: dict[str, Any],
) -> None:
    page = cohort["instructor"].get(f"/cohorts/{cohort['cohort']}").text
    parser = _Grids()
    parser.feed(page)
    assert set(parser.grids) == set(GRIDS)
    for grid_id, label in GRIDS.items():
        grid = parser.grids[grid_id]
        # A keyboard reaches the region (tabindex) and a screen reader names it.
        assert grid.region.get("tabindex") == "0", grid_id
        assert grid.region.get("role") == "region", grid_id
        assert grid.region.get("aria-label") == label, grid_id
        assert "grid-scroll" in (grid.region.get("class") or "").split(), grid_id
        header, *rows = grid.first_cells
        assert header[0] == "th" and header[2] == "learner", grid_id
        assert len(rows) == 3, grid_id
        for (tag, attrs, text), name in zip(rows, ("Ann", "Bob", "=HYPERLINK(1)"), strict=True):
            # Each row is headed by its learner: announced with every cell, and kept in view.
            assert tag == "th" and attrs.get("scope") == "row", (grid_id, text)
            assert text.startswith(name), (grid_id, text)
        for _tag, attrs, _text in grid.first_cells:
            assert "sticky-name" in (attrs.get("class") or "").split(), grid_id
