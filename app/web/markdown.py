"""Learner-written Markdown to safe HTML.

Raw HTML in the source is not passed through (html=False escapes it), and the result is cleaned
once more with an allow-list sanitiser: no script, no event handlers, no javascript: links.
"""

import nh3
from markdown_it import MarkdownIt
from markupsafe import Markup

_parser = MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table")

_ALLOWED_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "a",
    "h1", "h2", "h3", "h4", "h5", "h6", "hr", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip


def render_markdown(source: str | None, *, links: bool = True) -> Markup:
    """`links=False` keeps a link's text and drops the link (offline exports load nothing)."""
    html = _parser.render(source or "")
    cleaned = nh3.clean(
        html,
        tags=_ALLOWED_TAGS if links else _ALLOWED_TAGS - {"a"},
        attributes={"a": {"href", "title"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="nofollow noopener noreferrer",
    )
    return Markup(cleaned)  # noqa: S704  (sanitised just above)
