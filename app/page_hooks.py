"""What each feature adds to another's page, registered in one place (app/web/pages.py says
how). The web app's factory calls install(); a worker renders no page and never does.

The case attempt's page is the cases feature's and the round's is practice's; grading adds the
instructor's review and revise-and-resubmit to both, and re-renders them after a review form."""

from __future__ import annotations

from app.cases.routes import page_response as case_page
from app.grading.page_parts import case_part, round_part
from app.practice.round_routes import page_response as round_page
from app.web import pages


def install() -> None:
    """Register every page's renderer and parts (idempotent)."""
    pages.register_page("case", case_page)
    pages.register_page("round", round_page)
    pages.add_part("case", "grading: the review, revisions and the queue", case_part)
    pages.add_part("round", "grading: the review, revisions and the queue", round_part)
