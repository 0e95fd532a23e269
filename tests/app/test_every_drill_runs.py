"""Every drill in the catalogue runs from its page through a real worker and renders its result."""

import re
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from drills.core.catalogue import describe
from drills.core.registry import all_drills
from tests.conftest import wait_until_final

DRILLS = [describe(drill) for drill in all_drills()]


class KnobFields(HTMLParser):
    """The values a browser would submit for the knob.* inputs and selects of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.values: dict[str, str] = {}
        self._select: str | None = None

    @classmethod
    def read(cls, page: str) -> dict[str, str]:
        parser = cls()
        parser.feed(page)
        return parser.values

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        name = found.get("name") or ""
        if tag == "input" and name.startswith("knob."):
            self.values[name] = found.get("value") or ""
        elif tag == "select" and name.startswith("knob."):
            self._select = name
        elif tag == "option" and self._select and "selected" in found:
            self.values[self._select] = found.get("value") or ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "select":
            self._select = None


def test_the_catalogue_page_lists_every_drill(client: TestClient) -> None:
    page = client.get("/").text
    for drill in DRILLS:
        assert f'href="/drills/{drill["slug"]}"' in page


@pytest.mark.slow  # every drill's full default run
@pytest.mark.parametrize("drill", DRILLS, ids=[d["slug"] for d in DRILLS])
def test_the_default_run_of_each_drill_finishes_and_renders(
    client: TestClient, drill: dict[str, object]
) -> None:
    slug = drill["slug"]
    page = client.get(f"/drills/{slug}").text
    hypothesis = re.search(r'name="hypothesis" value="([^"]+)"', page).group(1)  # type: ignore[union-attr]
    form = {"hypothesis": hypothesis, "prediction": "A first look.", "seed": "1"}
    # The form as a browser would send it: every knob field with the value the page shows.
    form |= KnobFields.read(page)
    assert {name.removeprefix("knob.") for name in form if name.startswith("knob.")} == {
        knob["name"]
        for knob in drill["knobs"]  # type: ignore[attr-defined]
    }
    response = client.post(f"/drills/{slug}/attempts", data=form, follow_redirects=False)
    assert response.status_code == 303, response.text
    attempt = wait_until_final(client, int(response.headers["location"].rsplit("/", 1)[1]))
    assert attempt["status"] in ("succeeded", "failed"), attempt["error"]
    assert attempt["observed_hypothesis"] is not None
    assert attempt["environment"]["threads"] == 1 and attempt["digest"]
    rendered = client.get(f"/attempts/{attempt['id']}").text
    assert 'id="compare"' in rendered and 'class="chart"' in rendered
