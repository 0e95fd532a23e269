"""The drill page's "Compare selected" (app/runs/run_picks.py): a box per finished run in the list
of attempts, a plain GET form that leads to the first ticked run's page with the others compared,
and a refusal that says why (too many, too few) with the ticks kept."""

import re
from html.parser import HTMLParser
from typing import Any

import pytest
from fastapi.testclient import TestClient

from app.runs.run_picks import MAX_PICKED
from tests.app.factories import add_attempt, add_unfinished_attempt, add_user, engine_of
from tests.app.runs.test_run_comparison import add_points, runs_on
from tests.conftest import log_in

DRILL_PAGE = "/drills/overfit-one-batch"
PICK = f"{DRILL_PAGE}/compare"


class PickerForm(HTMLParser):
    """The compare form of a page: its attributes, its boxes' attributes, its buttons' text."""

    def __init__(self) -> None:
        super().__init__()
        self.form: dict[str, str | None] = {}
        self.boxes: list[dict[str, str | None]] = []
        self.buttons: list[str] = []
        self._inside = False
        self._button: list[str] | None = None

    @classmethod
    def of(cls, page: str) -> "PickerForm":
        parser = cls()
        parser.feed(page)
        return parser

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "form" and found.get("id") == "compare-picker":
            self.form, self._inside = found, True
        elif self._inside and tag == "input" and found.get("type") == "checkbox":
            self.boxes.append(found)
        elif self._inside and tag == "button":
            self._button = []

    def handle_data(self, data: str) -> None:
        if self._button is not None:
            self._button.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "button" and self._button is not None:
            self.buttons.append("".join(self._button).strip())
            self._button = None
        elif tag == "form":
            self._inside = False

    def values(self) -> list[int]:
        return [int(box["value"] or 0) for box in self.boxes]

    def ticked(self) -> list[int]:
        return [int(box["value"] or 0) for box in self.boxes if "checked" in box]


@pytest.fixture
def lee(anonymous: TestClient) -> dict[str, Any]:
    """Learner "lee" (logged in): three finished runs with points, one still queued (it names
    the app's scheduler, so the housekeeping leaves it be); "ola"'s finished run."""
    engine = engine_of(anonymous)
    scheduler = anonymous.app.state.runner.scheduler_id  # type: ignore[attr-defined]
    lee, ola = add_user(engine, "lee"), add_user(engine, "ola")
    ids = {
        "failed": add_attempt(engine, lee, fixed=False),
        "fixed": add_attempt(engine, lee, fixed=True),
        "latest": add_attempt(engine, lee, fixed=True),
        "queued": add_unfinished_attempt(engine, lee, scheduler_id=scheduler),
        "olas": add_attempt(engine, ola, fixed=True),
    }
    for name, losses in {"failed": [1.4, 1.39], "fixed": [1.4, 0.1], "latest": [1.3, 0.01]}.items():
        add_points(engine, ids[name], losses)
    log_in(anonymous, "lee")
    return {"client": anonymous, "engine": engine, "lee": lee, **ids}


def test_the_list_of_attempts_is_a_get_form_with_a_box_per_finished_run(
    lee: dict[str, Any],
) -> None:
    picker = PickerForm.of(lee["client"].get(DRILL_PAGE).text)
    assert picker.form["method"] == "get" and picker.form["action"] == PICK
    # Newest first, as listed; the queued run has no box.
    assert picker.values() == [lee["latest"], lee["fixed"], lee["failed"]]
    assert all(box["name"] == "run" for box in picker.boxes)
    assert [box["aria-label"] for box in picker.boxes] == [
        f"Compare attempt {lee[name]}" for name in ("latest", "fixed", "failed")
    ]
    assert picker.ticked() == []
    assert picker.buttons == ["Compare selected"]


def test_fewer_than_two_finished_runs_offer_nothing_to_tick(anonymous: TestClient) -> None:
    engine = engine_of(anonymous)
    add_attempt(engine, add_user(engine, "new"), fixed=True)
    log_in(anonymous, "new")
    page = anonymous.get(DRILL_PAGE).text
    assert 'id="attempt-history"' in page
    assert PickerForm.of(page).boxes == [] and "Compare selected" not in page


def test_compare_selected_opens_the_first_ticked_run_with_the_others_beside_it(
    lee: dict[str, Any],
) -> None:
    client = lee["client"]
    ticked = {"run": [str(lee["latest"]), str(lee["failed"])]}
    response = client.get(PICK, params=ticked, follow_redirects=False)
    assert response.status_code == 303
    assert response.headers["location"] == f"/attempts/{lee['latest']}?compare={lee['failed']}"
    page = client.get(response.headers["location"]).text
    assert [run["label"] for run in runs_on(page, "chart-loss")] == [f"#{lee['failed']}"]
    # Both runs are linked from the comparison's table.
    table = page.split('id="compare-table"', 1)[1].split("</table>", 1)[0]
    for name in ("latest", "failed"):
        assert f'<a href="/attempts/{lee[name]}">#{lee[name]}</a>' in table


def test_as_many_runs_as_the_limit_are_compared(lee: dict[str, Any]) -> None:
    engine, client = lee["engine"], lee["client"]
    more = [add_attempt(engine, lee["lee"], fixed=True) for _ in range(MAX_PICKED - 3)]
    picked = [*more, lee["latest"], lee["fixed"], lee["failed"]]
    assert len(picked) == MAX_PICKED
    response = client.get(PICK, params={"run": [str(i) for i in picked]})
    assert response.status_code == 200
    assert response.url.path == f"/attempts/{picked[0]}"
    labels = [run["label"] for run in runs_on(response.text, "chart-loss")]
    assert labels == [f"#{i}" for i in picked[1:]]


def test_ticking_more_than_the_limit_says_so_and_keeps_the_ticks(lee: dict[str, Any]) -> None:
    engine, client = lee["engine"], lee["client"]
    more = [add_attempt(engine, lee["lee"], fixed=True) for _ in range(MAX_PICKED - 2)]
    picked = [*more, lee["latest"], lee["fixed"], lee["failed"]]
    response = client.get(PICK, params={"run": [str(i) for i in picked]}, follow_redirects=False)
    assert response.status_code == 422
    message = re.search(r'<p class="error" id="error-compare">([^<]*)</p>', response.text)
    assert message is not None
    assert message.group(1) == (
        f"You ticked {MAX_PICKED + 1} runs: at most {MAX_PICKED} fit on one chart. "
        "Untick 1 and compare again."
    )
    # The drill page again, nothing dropped: every tick is kept, each box points at the reason.
    picker = PickerForm.of(response.text)
    assert sorted(picker.ticked()) == sorted(picked)
    assert all(box["aria-describedby"] == "error-compare" for box in picker.boxes)
    assert 'id="attempt-form"' in response.text


@pytest.mark.parametrize(("ticked", "status"), [([], 200), (["latest"], 422)])
def test_fewer_than_two_ticks_say_so(lee: dict[str, Any], ticked: list[str], status: int) -> None:
    # Nothing ticked is the page with the prompt (also the bare address); one tick is refused.
    params = {"run": [str(lee[name]) for name in ticked]}
    response = lee["client"].get(PICK, params=params, follow_redirects=False)
    assert response.status_code == status
    assert "Tick two or more finished runs" in response.text
    assert PickerForm.of(response.text).ticked() == [lee[name] for name in ticked]


@pytest.mark.parametrize("name", ["queued", "olas"])
def test_a_run_the_list_does_not_offer_is_refused_like_a_missing_one(
    lee: dict[str, Any], name: str
) -> None:
    params = {"run": [str(lee["latest"]), str(lee[name])]}
    response = lee["client"].get(PICK, params=params, follow_redirects=False)
    assert response.status_code == 404


def test_a_tick_that_is_not_an_attempt_number_is_a_422(lee: dict[str, Any]) -> None:
    response = lee["client"].get(PICK, params={"run": ["banana", str(lee["latest"])]})
    assert response.status_code == 422


def test_the_list_keeps_its_ticks_when_it_refreshes(lee: dict[str, Any]) -> None:
    # The section sends its boxes along with its refresh (hx-include), and gets them back ticked.
    page = lee["client"].get(DRILL_PAGE).text
    section = page.split('id="attempt-history"', 1)[1].split(">", 1)[0]
    assert 'hx-include="this"' in section
    refreshed = lee["client"].get(f"{DRILL_PAGE}/history", params={"run": str(lee["fixed"])})
    assert PickerForm.of(refreshed.text).ticked() == [lee["fixed"]]
