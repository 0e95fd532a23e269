"""The table under compared runs (app/runs/comparison_table.py): a row per run, a column per knob
that differs between them, the knobs they share named once, and the numbers that matter."""

from html.parser import HTMLParser
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session

from app.runs.comparison_table import ComparedRun, for_attempt_page, knob_table
from app.runs.models import Attempt, AttemptStatus
from drills.core.catalogue import describe
from drills.core.registry import get_drill
from tests.app.factories import add_attempt, add_user, engine_of
from tests.app.runs.test_run_comparison import add_points
from tests.conftest import log_in

OVERFIT = describe(get_drill("overfit-one-batch"))
FINAL_LOSS = "Final loss (mean of the last 10% of steps)"


class Table(HTMLParser):
    """The comparison's table as text: its column heads and its rows' cells."""

    def __init__(self) -> None:
        super().__init__()
        self.heads: list[str] = []
        self.rows: list[list[str]] = []
        self.links: list[str] = []
        self._section = self._in_body = False
        self._cell: list[str] | None = None

    @classmethod
    def of(cls, page: str) -> "Table":
        parser = cls()
        parser.feed(page)
        return parser

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "section" and found.get("id") == "compare-table":
            self._section = True
        if not self._section:
            return
        if tag == "tbody":
            self._in_body = True
        elif tag == "tr" and self._in_body:
            self.rows.append([])
        elif tag in ("th", "td"):
            self._cell = []
        elif tag == "a" and self._in_body:
            self.links.append(str(found.get("href")))

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if not self._section:
            return
        if tag in ("th", "td") and self._cell is not None:
            text = " ".join("".join(self._cell).split())
            (self.rows[-1] if self._in_body else self.heads).append(text)
            self._cell = None
        elif tag == "section":
            self._section = False

    def column(self, head: str) -> list[str]:
        index = self.heads.index(head)
        return [row[index] for row in self.rows]


def same_in_all(page: str) -> str:
    return page.split('id="same-knobs"', 1)[1].split("</code>", 1)[0].split("<code>", 1)[1]


@pytest.fixture
def runs(anonymous: TestClient) -> dict[str, Any]:
    """Learner "lee" (logged in) with three finished runs: the failed one has bug=shuffled-labels,
    the other two bug=none; all share examples, lr, steps and seed."""
    engine = engine_of(anonymous)
    lee = add_user(engine, "lee")
    ids = {
        "failed": add_attempt(engine, lee, fixed=False),
        "fixed": add_attempt(engine, lee, fixed=True),
        "latest": add_attempt(engine, lee, fixed=True),
    }
    for name, losses in {"failed": [1.4, 1.39], "fixed": [1.4, 0.1], "latest": [1.3, 0.01]}.items():
        add_points(engine, ids[name], losses)
    log_in(anonymous, "lee")
    return {"client": anonymous, "engine": engine, **ids}


def compared_page(runs: dict[str, Any]) -> str:
    url = f"/attempts/{runs['latest']}?compare={runs['failed']},{runs['fixed']}"
    page: str = runs["client"].get(url).text
    return page


def test_a_knob_that_differs_is_a_column_and_the_shared_ones_are_named_once(
    runs: dict[str, Any],
) -> None:
    page = compared_page(runs)
    table = Table.of(page)
    assert table.heads[:3] == ["run", "status", "bug"]
    for shared in ("examples", "lr", "steps", "seed"):
        assert shared not in table.heads
    assert same_in_all(page).split() == ["examples=8", "lr=0.01", "seed=0", "steps=200"]
    # One row per run, the page's own first, each linked, with its status and its knob.
    order = [runs[name] for name in ("latest", "failed", "fixed")]
    assert table.links == [f"/attempts/{i}" for i in order]
    assert table.column("run") == [
        f"#{runs['latest']} (this run)",
        f"#{runs['failed']}",
        f"#{runs['fixed']}",
    ]
    assert table.column("status") == ["finished"] * 3
    assert table.column("bug") == ["none", "shuffled-labels", "none"]


def test_the_numbers_are_the_loss_curve_and_the_drills_signature(runs: dict[str, Any]) -> None:
    table = Table.of(compared_page(runs))
    assert table.column("loss at the last step") == ["0.01", "1.39", "0.1"]
    assert table.column("lowest loss") == ["0.01", "1.39", "0.1"]
    # The signature's observations, labelled as the attempt page's signature table labels them.
    assert table.column(FINAL_LOSS) == ["0.002", "1.38", "0.002"]
    assert table.column("Loss at the first step") == ["1.4"] * 3
    # An observation no run reported has no column.
    assert "Highest loss of the run" not in table.heads


def test_a_second_differing_knob_gets_its_own_column(runs: dict[str, Any]) -> None:
    with Session(runs["engine"]) as session:
        attempt = session.get(Attempt, runs["fixed"])
        assert attempt is not None
        attempt.knobs = {**attempt.knobs, "lr": 0.5}
        session.add(attempt)
        session.commit()
    page = compared_page(runs)
    table = Table.of(page)
    assert table.heads[:4] == ["run", "status", "bug", "lr"]
    assert table.column("lr") == ["0.01", "0.01", "0.5"]
    assert same_in_all(page).split() == ["examples=8", "seed=0", "steps=200"]


def test_a_run_shown_alone_has_no_table(runs: dict[str, Any]) -> None:
    page = runs["client"].get(f"/attempts/{runs['latest']}").text
    assert 'id="compare-table"' not in page


def run(knobs: dict[str, Any], *, seed: int = 0, losses: list[float | None] | None = None) -> Any:
    attempt = Attempt(
        learner_id=1,
        drill_slug="overfit-one-batch",
        drill_version="2",
        hypothesis="fits",
        prediction_text="",
        knobs=knobs,
        seed=seed,
        command="",
        status=AttemptStatus.succeeded,
    )
    series = {"loss": [[step, value] for step, value in enumerate(losses or [])]}
    return ComparedRun(attempt, series if losses else {})


def test_a_knob_one_run_lacks_differs_and_list_values_compare_by_value() -> None:
    table = knob_table(
        OVERFIT,
        [run({"sizes": [4, 8], "lr": 0.1}), run({"sizes": [4, 8]}, seed=1)],
    )
    assert table["same"] == [("sizes", [4, 8])]
    assert table["knobs"] == ["lr", "seed"]
    assert [row["knobs"] for row in table["rows"]] == [[0.1, 0], [None, 1]]


def test_a_loss_that_ended_not_finite_says_so() -> None:
    table = knob_table(OVERFIT, [run({}, losses=[1.4, 0.5, None]), run({}, losses=[1.4, 1.2])])
    assert table["numbers"] == ["loss at the last step", "lowest loss"]
    assert [row["numbers"] for row in table["rows"]] == [["not finite", 0.5], [1.2, 1.2]]


def test_an_observation_only_reported_as_null_has_no_column() -> None:
    runs = [run({}), run({})]
    runs[0].attempt.signature = {"final_loss": 0.5, "target_variance": None}
    runs[1].attempt.signature = {"final_loss": 0.7}
    table = knob_table(OVERFIT, runs)
    assert table["numbers"] == [FINAL_LOSS]
    assert [row["numbers"] for row in table["rows"]] == [[0.5], [0.7]]


def test_a_run_whose_setup_is_still_hidden_gets_no_table() -> None:
    hidden = run({"bug": "none"}).attempt
    hidden.hidden_setup, hidden.status = True, AttemptStatus.running
    other = run({"bug": "all-padding"}).attempt
    context = {
        "attempt": hidden,
        "drill": OVERFIT,
        "series": {},
        "compare_attempts": [other],
        "compare_runs": [{"id": 2, "label": "#2", "series": {}}],
    }
    assert for_attempt_page(context) is None
    hidden.status = AttemptStatus.succeeded  # ended: the drawn setup is shown
    table = for_attempt_page(context)
    assert table is not None and table["knobs"] == ["bug"]
