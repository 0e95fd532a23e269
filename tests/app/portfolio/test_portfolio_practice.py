"""The HTML portfolio holds the diagnosing work its JSON holds: every revealed case, answered
curve round and spaced review, each under the id and digest of its signed statement, the
learner's words as text, and nothing of a case or round still open."""

import json

from markupsafe import escape
from sqlalchemy import Engine

from drills.cases.registry import get_case
from drills.practice.items import get_item
from tests.app.factories import add_user
from tests.app.portfolio.test_portfolio_escaping import parse
from tests.app.portfolio_helpers import diagnosing_work, export_of
from tests.app.test_escaping import hostile

PRACTICE_KINDS = ("drillbook:case-attempt:", "drillbook:curve-round:", "drillbook:spaced-review:")


def test_every_case_round_and_review_statement_shows_in_the_html(engine: Engine) -> None:
    made = diagnosing_work(engine, add_user(engine, "diagnoser"))
    export = export_of(engine, made.learner)
    document = json.loads(export.json_bytes())
    practice = [s for s in document["statements"] if s["id"].startswith(PRACTICE_KINDS)]
    assert sorted(s["id"] for s in practice) == sorted(
        [f"drillbook:case-attempt:{made.case}", f"drillbook:curve-round:{made.round}"]
        + [f"drillbook:spaced-review:{entry}" for entry in made.reviews]
    )
    for statement in practice:
        assert f"record {statement['id']} · digest {statement['digest']}" in export.html, statement

    # Nothing of the open case or round: the JSON leaves them out, and so does the page.
    for hidden in (f"case-attempt:{made.open_case}", f"case-attempt-{made.open_case}"):
        assert hidden not in export.html
    for hidden in (f"curve-round:{made.open_round}", f"curve-round-{made.open_round}"):
        assert hidden not in export.html


def test_the_case_round_and_reviews_read_in_words(engine: Engine) -> None:
    made = diagnosing_work(engine, add_user(engine, "diagnoser"))
    html = export_of(engine, made.learner).html
    case = get_case("a-fresh-head")
    cause = case.case_set.cause("backbone-not-optimized")
    fix = case.case_set.fix("optimize-all-parameters")
    article = html[html.index(f'id="case-attempt-{made.case}"') :]
    article = article[: article.index("</article>")]
    assert escape(case.title) in article and '— <span class="status">4/4</span>' in article
    assert f"<strong>Cause named:</strong> {escape(cause.text)}" in article
    assert '<span class="match">(right)</span>' in article
    assert escape(fix.text) in article and "(healed: verified)" in article
    assert "0 of 3 experiments spent" in article and "Revealed 20" in article

    round_article = html[html.index(f'id="curve-round-{made.round}"') :]
    round_article = round_article[: round_article.index("</article>")]
    assert escape(f"Optimizer membership: {cause.text}") in round_article
    assert f"<strong>Leading hypothesis:</strong> {escape(cause.text)}" in round_article
    assert '<span class="match">(right)</span>' in round_article and "2/2" in round_article

    # The reviews: the track item by its prompt, and the counts per week by rating.
    assert escape(get_item("fastest-wiring-check").prompt) in html
    weeks = html[html.index('<table class="review-weeks">') :]
    weeks = weeks[: weeks.index("</table>")]
    assert "<th>again</th><th>hard</th><th>good</th><th>easy</th>" in weeks
    row = '<td class="num">{}</td>' * 5
    assert '<td class="when">2025-03-03</td>' + row.format(2, 1, 0, 1, 0) in weeks
    assert '<td class="when">2025-03-10</td>' + row.format(1, 0, 0, 0, 1) in weeks


def test_learner_words_in_a_diagnosis_stay_text(engine: Engine) -> None:
    words = hostile("XSS-diagnosis")
    made = diagnosing_work(engine, add_user(engine, "diagnoser"), words=words)
    html = export_of(engine, made.learner).html
    page = parse(html)
    assert page.problems == [] and "script" not in page.tags
    assert "<script>alert(1)</script>" not in html
    case = html[html.index(f'id="case-attempt-{made.case}"') :]
    assert f"<dt>Expected fix</dt><dd>{escape(words)}</dd>" in case[: case.index("</article>")]
    # The same words as the round's expected fix and as each review's answer, all as text.
    assert "\n".join(page.text).count(words) == 2 + len(made.reviews)
