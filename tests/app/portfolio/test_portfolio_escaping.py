"""Hostile names and texts stay text in the exported HTML, and never reach a file name."""

import json
import re
from html.parser import HTMLParser
from typing import Any

from fastapi.testclient import TestClient
from sqlmodel import Session

from app.accounts.models import Role
from app.models.time import utcnow
from app.portfolio.bundle import learner_basename, slug
from app.portfolio.charts import Series, chart_svg
from app.runs.models import Attempt, Explanation, MetricPoint
from drills.core.registry import get_drill
from tests.app.factories import (
    DRILL,
    add_attempt,
    add_review,
    add_submission,
    add_user,
    engine_of,
    signed_in,
)
from tests.app.portfolio_helpers import unzip
from tests.app.test_escaping import MARKDOWN_EXTRA, hostile

URL_ATTRIBUTES = {
    "href",
    "src",
    "srcset",
    "action",
    "formaction",
    "xlink:href",
    "data",
    "poster",
    "background",
    "ping",
}
FORBIDDEN_TAGS = {
    "script",
    "img",
    "iframe",
    "object",
    "embed",
    "link",
    "base",
    "a",
    "form",
    "frame",
    "video",
    "audio",
    "source",
    "use",
    "image",
    "foreignobject",
}


class Markup(HTMLParser):
    """Everything in a page that could run code or fetch something, plus its visible text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.problems: list[str] = []
        self.tags: list[str] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        shown = self.get_starttag_text()
        self.tags.append(tag)
        if tag in FORBIDDEN_TAGS:
            self.problems.append(f"<{tag}>: {shown}")
        for name, value in attrs:
            if name.startswith("on"):
                self.problems.append(f"event handler {name}: {shown}")
            if name in URL_ATTRIBUTES:
                self.problems.append(f"URL attribute {name}: {shown}")
            if name == "style" or "url(" in (value or "").lower():
                self.problems.append(f"style or url(): {shown}")
            if tag == "meta" and (dict(attrs).get("http-equiv") or "").lower() == "refresh":
                self.problems.append(f"refresh: {shown}")

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parse(html: str) -> Markup:
    parser = Markup()
    parser.feed(html)
    parser.close()
    return parser


def hostile_learner(anonymous: TestClient) -> tuple[int, list[str]]:
    """A learner whose every field holds hostile text: name, prediction, error, diagnostics,
    explanation, submitted Markdown and the instructor's feedback; returns the labels to find."""
    engine = engine_of(anonymous)
    teacher = add_user(engine, "teacher", Role.instructor, display_name=hostile("XSS-teacher"))
    learner = add_user(engine, "../../evil</x>", display_name=hostile("XSS-learner") + "\x1b\u202e")
    failed = add_attempt(engine, learner, fixed=False, prediction=hostile("XSS-prediction"))
    fixed = add_attempt(engine, learner, fixed=True, prediction=hostile("XSS-fixed-prediction"))
    with Session(engine) as session:
        attempt = session.get(Attempt, failed)
        assert attempt is not None
        attempt.error = hostile("XSS-error")
        attempt.diagnostics = {
            "parameters": [
                {
                    "name": hostile("XSS-param"),
                    "grad": "none",
                    "in_optimizer": True,
                    "requires_grad": True,
                }
            ],
            "tables": [
                {
                    "key": "t",
                    "title": hostile("XSS-table"),
                    "columns": [hostile("XSS-col")],
                    "rows": [[hostile("XSS-cell")]],
                }
            ],
        }
        session.add(attempt)
        session.add_all(
            MetricPoint(attempt_id=failed, name="loss", step=s, value=1.0 / (s + 1))
            for s in range(20)
        )
        texts: dict[str, Any] = dict.fromkeys(
            ("mechanism", "right_tool", "wrong_tool", "next_check"), hostile("XSS-explained")
        )
        session.add(Explanation(attempt_id=fixed, learner_id=learner, created_at=utcnow(), **texts))
        session.commit()
    submission = add_submission(
        engine,
        learner,
        failed,
        fixed,
        text=hostile("XSS-markdown") + MARKDOWN_EXTRA,
        status="changes_requested",
    )
    add_review(
        engine, submission, teacher, comment=hostile("XSS-feedback"), decision="changes_requested"
    )
    labels = ["XSS-learner", "XSS-prediction", "XSS-fixed-prediction", "XSS-error"]
    labels += ["XSS-param", "XSS-table", "XSS-col", "XSS-cell", "XSS-explained"]
    labels += ["XSS-markdown", "XSS-feedback", "XSS-teacher"]
    return learner, labels


def test_hostile_texts_cannot_break_out_of_the_exported_html(anonymous: TestClient) -> None:
    _, labels = hostile_learner(anonymous)
    client = signed_in(anonymous.app, "../../evil</x>")  # type: ignore[arg-type]
    html = client.get("/portfolio/export.html").text
    page = parse(html)
    assert page.problems == []
    assert "script" not in page.tags
    # One inline <svg> per chart of each of the two attempts, and no other.
    charts = len(get_drill(DRILL).charts)
    assert page.tags.count("svg") == html.count('<figure class="chart-figure"') == 2 * charts
    assert "http://" not in html and "https://" not in html
    visible = "\n".join(page.text)
    missing = [label for label in labels if label not in visible]
    assert missing == [], "hostile texts must still be shown, as text"
    assert "<script>alert(1)</script>" in visible  # shown literally, not run


def test_hostile_usernames_never_reach_a_file_name(anonymous: TestClient) -> None:
    hostile_learner(anonymous)
    client = signed_in(anonymous.app, "../../evil</x>")  # type: ignore[arg-type]
    response = client.get("/portfolio/export.zip")
    disposition = response.headers["content-disposition"]
    assert re.fullmatch(
        r'attachment; filename="drillbook-portfolio-evil-x-\d{4}-\d\d-\d\d\.zip"', disposition
    )
    for name in unzip(response.content):
        assert re.fullmatch(r"drillbook-portfolio-evil-x-\d{4}-\d\d-\d\d\.(html|json)", name), name
    # The JSON keeps the real name: it is data, not a path.
    document = json.loads(client.get("/portfolio/export.json").content)
    assert document["statements"][0]["actor"]["account"]["name"] == "../../evil</x>"


def test_slugs_are_made_of_lowercase_letters_digits_and_dashes() -> None:
    for text in ("../..", "ÄÖÜ", 'a/b\\c:d*e?f"g<h>i|j', "\x00", "CON", "x" * 300, "-.-"):
        made = learner_basename(text, 7, utcnow())
        assert re.fullmatch(r"drillbook-portfolio-[a-z0-9]+(-[a-z0-9]+)*-\d{4}-\d\d-\d\d", made), (
            made
        )
    assert slug("../..", fallback="learner-7") == "learner-7"
    assert len(slug("x" * 300, fallback="f")) == 40


def test_chart_texts_are_escaped() -> None:
    chart = {
        "key": "k",
        "title": hostile("XSS-title"),
        "metrics": ["loss@*"],
        "y_label": '"><svg onload=1>',
        "log_y": True,
    }
    series: Series = {
        f"loss@{hostile('n')}": [[0, 1.0], [1, 0.1], [2, None], [3, 0.01]],
        "loss@b": [[0, 2.0], [1, 0.0]],
    }
    svg = str(chart_svg(chart, series))
    page = parse(svg)
    assert page.problems == []
    assert page.tags.count("svg") == 1 and page.tags.count("path") == 2
    assert "XSS-title" in "".join(page.text)
