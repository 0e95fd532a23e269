"""Learner Markdown: ordinary Markdown survives; markup that could run script does not."""

from html.parser import HTMLParser

import pytest
from markupsafe import Markup

from app.web.markdown import render_markdown
from tests.app.factories import live_markup, scan

# What ordinary Markdown renders to; anything else in the output came from the learner.
ALLOWED_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "a",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
HOSTILE = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    '"><svg onload=alert(1)>',
    "[x](javascript:alert(1))",
    "javascript:alert(1)",
    "[x](JaVaScRiPt:alert(1))",
    "[x](java\tscript:alert(1))",
    "[x](&#106;avascript:alert(1))",
    "[x](javascript&colon;alert(1))",
    "[x](<javascript:alert(1)>)",
    '[x](javascript:alert(1) "title")',
    "<javascript:alert(1)>",
    "![x](javascript:alert(1))",
    "![x](x.png)",
    "[x][ref]\n\n[ref]: javascript:alert(1)",
    "[x](vbscript:msgbox(1))",
    "[x](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '<a href="javascript:alert(1)">x</a>',
    "<details open ontoggle=alert(1)>x</details>",
    "<iframe src=javascript:alert(1)></iframe>",
    "<style>body{background:url(javascript:alert(1))}</style>",
    '<div hx-get="/logout" hx-trigger="load" hx-on:click="alert(1)">x</div>',
    "<!-- <script>alert(1)</script> -->",
    "```html\n<script>alert(1)</script>\n```",
    "`<img src=x onerror=alert(1)>`",
    "> <svg onload=alert(1)>",
    "- [x](javascript:alert(1))\n- <script>alert(1)</script>",
    "| a | b |\n|---|---|\n| <img src=x onerror=alert(1)> | [x](javascript:alert(1)) |",
]


@pytest.mark.parametrize("source", HOSTILE)
def test_hostile_markdown_renders_without_live_markup(source: str) -> None:
    rendered = render_markdown(source)
    assert isinstance(rendered, Markup)
    assert live_markup(rendered) == []
    # No markup the learner wrote survives as markup, whatever it was.
    for tag in ("<script", "<img", "<svg", "<iframe", "<style", "<details", "<div"):
        assert tag not in rendered
    tags, attributes = markup_of(rendered)
    assert tags <= ALLOWED_TAGS
    assert attributes <= {"href", "title", "rel"}  # no hx-*, no style, no on*


class _Markup(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attributes: set[str] = set()

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attributes |= {name for name, _ in attrs}


def markup_of(fragment: str) -> tuple[set[str], set[str]]:
    parser = _Markup()
    parser.feed(fragment)
    parser.close()
    return parser.tags, parser.attributes


def test_hostile_html_stays_readable_as_text() -> None:
    problems, text = scan(render_markdown("Never write <script>alert(1)</script> in a page."))
    assert problems == []
    assert "Never write <script>alert(1)</script> in a page." in text
    assert "&lt;script&gt;" in render_markdown("<script>alert(1)</script>")


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("*emphasis* and _this_", "<em>emphasis</em> and <em>this</em>"),
        ("**strong**", "<strong>strong</strong>"),
        ("- one\n- two", "<ul>\n<li>one</li>\n<li>two</li>\n</ul>"),
        ("1. first\n2. second", "<ol>\n<li>first</li>\n<li>second</li>\n</ol>"),
        ("call `loss.backward()`", "<code>loss.backward()</code>"),
        ("```\nx = a < b\n```", "<pre><code>x = a &lt; b\n</code></pre>"),
        ("> quoted", "<blockquote>\n<p>quoted</p>\n</blockquote>"),
        ("## Heading", "<h2>Heading</h2>"),
        ("| a | b |\n|---|---|\n| 1 | 2 |", "<td>1</td>"),
    ],
)
def test_ordinary_markdown_is_kept(source: str, expected: str) -> None:
    rendered = render_markdown(source)
    assert expected in rendered
    assert live_markup(rendered) == []


@pytest.mark.parametrize(
    "url", ["https://pytorch.org/docs/stable/", "http://example.com/a?b=1", "mailto:a@b.example"]
)
def test_ordinary_links_are_kept_and_do_not_leak_the_opener(url: str) -> None:
    rendered = str(render_markdown(f"see [the docs]({url})"))
    assert f'href="{url.replace("&", "&amp;")}"' in rendered
    assert 'rel="nofollow noopener noreferrer"' in rendered
    assert ">the docs</a>" in rendered


def test_nothing_renders_as_nothing() -> None:
    assert render_markdown("") == "" and render_markdown(None) == ""
