"""The exported HTML portfolio reads at a phone's width: every section of a learner with runs,
charts, a reviewed submission, an exercise run, cases, curve rounds and spaced reviews fits in
390 px; wide tables scroll inside their own box, long commands and digests wrap."""

import pytest
from playwright.sync_api import Browser, ViewportSize
from sqlalchemy import Engine
from sqlmodel import Session, select

from app.accounts.models import Role
from app.exercises.models import ExerciseRun
from app.runs.models import Attempt, MetricPoint
from tests.app.factories import add_exercise_run, add_user
from tests.app.portfolio_helpers import diagnosing_work, export_of, reviewed_learner
from tests.browser.test_layout import overflowing

pytestmark = [pytest.mark.browser, pytest.mark.slow]
PHONE: ViewportSize = {"width": 390, "height": 844}
# Unbroken runs of text a phone cannot fit: a flag-heavy command, a long diff line, an answer.
LONG = "--set=" + "x" * 160
# Each table wider than its parent: its class, and how its parent lets it overflow.
WIDER_THAN_THEIR_BOX = """() => [...document.querySelectorAll("table")]
  .filter((table) => table.getBoundingClientRect().width > table.parentElement.clientWidth)
  .map((table) => [table.className, getComputedStyle(table.parentElement).overflowX])"""


def full_portfolio(engine: Engine) -> int:
    """One learner with every section of the export filled, the longest texts unbroken."""
    teacher = add_user(engine, "teacher", Role.instructor)
    work = reviewed_learner(engine, "phone-learner", teacher)
    diagnosing_work(engine, work.id, words="answer " + LONG)
    run = add_exercise_run(engine, work.id)
    with Session(engine) as session:
        failed = session.get(Attempt, work.failed)
        assert failed is not None
        failed.command = f"python -m drills run overfit-one-batch {LONG}"
        failed.diagnostics = {
            "parameters": [
                {
                    "name": "backbone.layers.0.attention.query_projection.weight",
                    "requires_grad": True,
                    "in_optimizer": True,
                    "grad": "finite",
                    "grad_norm": 0.0123456,
                    "update_norm": 1.234e-05,
                    "update_ratio": 1.0e-07,
                }
            ]
        }
        session.add(failed)
        session.add_all(
            MetricPoint(attempt_id=work.failed, name=name, step=step, value=1.0 / (step + 1))
            for name in ("loss", "grad_norm")
            for step in range(30)
        )
        exercise = session.exec(select(ExerciseRun).where(ExerciseRun.attempt_id == run)).one()
        exercise.diff = f"+    optimizer = torch.optim.SGD(model.parameters(), {LONG})\n"
        session.add(exercise)
        session.commit()
    return work.id


def test_the_exported_html_fits_a_phone(browser: Browser, engine: Engine) -> None:
    html = export_of(engine, full_portfolio(engine)).html
    for section in ('class="cases"', 'class="rounds"', 'class="spaced-review"', "exercise-run-"):
        assert section in html
    context = browser.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.set_content(html)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], f"{width} px wide: " + "; ".join(overflowing(page, 390))
        # A table wider than the phone keeps its columns and scrolls inside its own box.
        wide = page.evaluate(WIDER_THAN_THEIR_BOX)
        assert ["reviews", "auto"] in wide and all(overflow == "auto" for _, overflow in wide)
    finally:
        context.close()
