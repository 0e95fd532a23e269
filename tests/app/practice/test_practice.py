"""Spaced review: the "Due today" list of a new learner, a review (answer first, then the model
answer, then the rating), FSRS rescheduling under an injected clock, misses becoming items, and
who may see what."""

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, col, select

from app.practice.models import ReviewCard, ReviewLogEntry
from app.practice.service import NEW_PER_DAY
from drills.core.registry import get_drill
from drills.practice.items import all_items
from tests.app.clock import MONDAY, Clock
from tests.app.factories import engine_of, signed_in
from tests.conftest import make_user, wait_until_final

FIRST = f"track:{all_items()[0].key}"


def ready_keys(client: TestClient) -> list[str]:
    page = client.get("/practice").text
    section = page.split('id="due-now"', 1)[1].split("</section>", 1)[0]
    return re.findall(r'<li data-item="([^"]+)"', section)


def later_keys(client: TestClient) -> list[str]:
    page = client.get("/practice").text
    if 'id="due-later"' not in page:
        return []
    section = page.split('id="due-later"', 1)[1].split("</section>", 1)[0]
    return re.findall(r'<li data-item="([^"]+)"', section)


def review(client: TestClient, key: str, rating: str, answer: str = "From memory: ...") -> str:
    page = client.get(f"/practice/{key}").text
    seen = re.search(r'name="seen_reviews" value="(\d+)"', page)
    assert seen
    response = client.post(
        f"/practice/{key}/rating",
        data={"answer": answer, "rating": rating, "seen_reviews": seen.group(1)},
        follow_redirects=False,
    )
    assert response.status_code == 303, response.text
    return str(response.headers["location"])


def logs(client: TestClient) -> list[ReviewLogEntry]:
    with Session(engine_of(client)) as session:
        return list(session.exec(select(ReviewLogEntry)).all())


def test_a_new_learner_has_track_items_due_today(client: TestClient, clock: Clock) -> None:
    keys = ready_keys(client)
    assert keys == [f"track:{item.key}" for item in all_items()[:NEW_PER_DAY]]
    assert not logs(client)  # reading the list stored nothing


def test_a_review_asks_first_then_shows_the_model_answer_then_reschedules(
    client: TestClient, clock: Clock
) -> None:
    item = all_items()[0]
    page = client.get(f"/practice/{FIRST}").text
    assert item.prompt.split()[0] in page
    assert 'id="practice-model"' not in page  # the model answer waits for an answer
    empty = client.post(f"/practice/{FIRST}/answer", data={"answer": "  ", "seen_reviews": "0"})
    assert empty.status_code == 422
    assert 'aria-describedby="practice-answer-error"' in empty.text
    assert "from memory first" in empty.text and 'id="practice-model"' not in empty.text
    shown = client.post(
        f"/practice/{FIRST}/answer", data={"answer": "Overfit one batch.", "seen_reviews": "0"}
    )
    assert shown.status_code == 200 and 'id="practice-model"' in shown.text
    assert 'id="practice-yours">Overfit one batch.<' in shown.text
    assert f'href="/drills/{item.drills[0]}"' in shown.text  # the evidence behind the answer
    assert not logs(client)  # nothing is stored before the rating

    following = review(client, FIRST, "good", answer="Overfit one batch.")
    assert following == f"/practice/track:{all_items()[1].key}?rated=track%3A{item.key}"
    [entry] = logs(client)
    assert (entry.item_key, entry.rating, entry.answer) == (FIRST, "good", "Overfit one batch.")
    # Rated good: not due again today, nor in the day's new items; tomorrow neither.
    assert FIRST not in ready_keys(client) and FIRST not in later_keys(client)
    clock.now = MONDAY + timedelta(days=1)
    assert FIRST not in ready_keys(client)
    clock.now = MONDAY + timedelta(days=40)
    assert FIRST in ready_keys(client)


def test_again_brings_an_item_back_the_same_day(client: TestClient, clock: Clock) -> None:
    review(client, FIRST, "again")
    assert FIRST not in ready_keys(client) and FIRST in later_keys(client)
    clock.now = MONDAY + timedelta(minutes=11)
    assert ready_keys(client)[0] == FIRST  # a failed item comes first when it is back


def test_easy_waits_longer_than_good(client: TestClient, clock: Clock) -> None:
    second = f"track:{all_items()[1].key}"
    review(client, FIRST, "good")
    review(client, second, "easy")
    with Session(engine_of(client)) as session:
        due = {card.item_key: card.due_at for card in session.exec(select(ReviewCard)).all()}
    assert due[second] > due[FIRST] > MONDAY + timedelta(days=1)


def test_the_day_brings_only_so_many_new_items(client: TestClient, clock: Clock) -> None:
    for key in ready_keys(client):
        review(client, key, "good")
    assert ready_keys(client) == []
    page = client.get("/practice?done=1").text
    assert 'id="practice-done"' in page and "next review falls due" in page
    clock.now = MONDAY + timedelta(days=1)
    fresh = ready_keys(client)
    assert len(fresh) == NEW_PER_DAY
    assert fresh[0] == f"track:{all_items()[NEW_PER_DAY].key}"


def test_a_rating_pressed_twice_counts_once(client: TestClient, clock: Clock) -> None:
    form = {"answer": "An answer.", "rating": "good", "seen_reviews": "0"}
    first = client.post(f"/practice/{FIRST}/rating", data=form, follow_redirects=False)
    again = client.post(f"/practice/{FIRST}/rating", data=form, follow_redirects=False)
    assert first.status_code == 303 and again.status_code == 409
    assert "rated this item already" in again.text
    assert len(logs(client)) == 1


def test_bad_ratings_are_refused_by_name_and_store_nothing(
    client: TestClient, clock: Clock
) -> None:
    refused = client.post(
        f"/practice/{FIRST}/rating", data={"answer": "x", "rating": "perfect", "seen_reviews": "0"}
    )
    assert refused.status_code == 422 and "again, hard, good or easy" in refused.text
    blank = client.post(
        f"/practice/{FIRST}/rating", data={"answer": "", "rating": "good", "seen_reviews": "0"}
    )
    assert blank.status_code == 422 and "from memory first" in blank.text
    assert client.get("/practice/track:no-such-item").status_code == 404
    odd = client.post(f"/practice/{FIRST}/answer", data={"answer": "x", "seen_reviews": "abc"})
    assert odd.status_code == 200  # an unreadable count is no count, never a 500
    assert not logs(client)


def test_a_missed_prediction_becomes_a_review_that_comes_back_with_a_new_seed(
    client: TestClient, clock: Clock
) -> None:
    # Predicted a clean fit; the labels were shuffled: the run shows otherwise.
    response = client.post(
        "/drills/overfit-one-batch/attempts",
        data={
            "hypothesis": "fits",
            "prediction": "The loss reaches about zero.",
            "knob.examples": "8",
            "knob.bug": "shuffled-labels",
            "knob.lr": "0.01",
            "knob.steps": "60",
            "seed": "3",
        },
        follow_redirects=False,
    )
    attempt_id = int(response.headers["location"].rsplit("/", 1)[1])
    final = wait_until_final(client, attempt_id)
    assert final["observed_hypothesis"] != "fits"
    key = f"drill-miss:overfit-one-batch:{final['observed_hypothesis']}"
    assert ready_keys(client)[0] == key  # a miss comes before the day's new items
    # The list is read before answering: it names the miss, not what the run showed.
    shown_text = next(
        h.text
        for h in get_drill("overfit-one-batch").hypotheses
        if h.key == final["observed_hypothesis"]
    )
    listed = client.get("/practice").text
    assert "Your missed prediction in Overfit a single batch" in listed
    assert shown_text[:30] not in listed
    shown = client.post(f"/practice/{key}/answer", data={"answer": "?", "seen_reviews": "0"}).text
    assert f'href="/attempts/{attempt_id}"' in shown
    retry = re.search(r'href="(/drills/overfit-one-batch\?seed=(\d+)&[^"]+)"', shown)
    assert retry and int(retry.group(2)) != 3 and "knob.bug=shuffled-labels" in retry.group(1)
    # The link sets up the drill's form with the new seed.
    form = client.get(retry.group(1).replace("&amp;", "&")).text
    assert re.search(rf'id="seed"[^>]*value="{retry.group(2)}"', form)
    review(client, key, "again")
    assert key in later_keys(client)


def test_a_miss_item_is_its_learners_alone(client: TestClient, clock: Clock) -> None:
    from app.practice.misses import note_drill_miss
    from app.runs.models import Attempt
    from tests.app.factories import add_attempt

    engine = engine_of(client)
    me = int(client.get("/api/session").json()["user_id"])
    attempt_id = add_attempt(engine, me, fixed=False)
    with Session(engine) as session:
        attempt = session.get(Attempt, attempt_id)
        assert attempt is not None
        note_drill_miss(session, attempt, now=MONDAY)
        note_drill_miss(session, attempt, now=MONDAY)  # a second miss reopens, never doubles
        session.commit()
        assert len(session.exec(select(ReviewCard)).all()) == 1
    key = "drill-miss:overfit-one-batch:labels-detached"
    assert client.get(f"/practice/{key}").status_code == 200
    make_user(engine, "learner-b")
    other = signed_in(client.app, "learner-b")  # type: ignore[arg-type]
    assert other.get(f"/practice/{key}").status_code == 404
    refused = other.post(
        f"/practice/{key}/rating", data={"answer": "x", "rating": "good", "seen_reviews": "0"}
    )
    assert refused.status_code == 404
    assert not logs(client)


def test_visitors_are_sent_to_log_in(anonymous: TestClient) -> None:
    response = anonymous.get("/practice", follow_redirects=False)
    assert response.status_code == 303 and response.headers["location"].startswith("/login")


@pytest.mark.parametrize("reviewed_before", [0, 1], ids=["new item", "card kept"])
def test_two_ratings_at_once_count_once(
    client: TestClient, clock: Clock, monkeypatch: pytest.MonkeyPatch, reviewed_before: int
) -> None:
    """Both requests read the card before either writes (a barrier holds them there)."""
    from app.practice import service as practice
    from app.practice.items import card_of
    from tests.app.test_races import at_once, gated

    for _ in range(reviewed_before):
        review(client, FIRST, "again")
        clock.now += timedelta(minutes=11)
    monkeypatch.setattr(practice, "card_of", gated(card_of, 2))
    form = {"answer": "An answer.", "rating": "good", "seen_reviews": str(reviewed_before)}
    statuses = sorted(
        response.status_code
        for response in at_once(
            [
                lambda: client.post(f"/practice/{FIRST}/rating", data=form, follow_redirects=False)
                for _ in range(2)
            ]
        )
    )
    assert statuses == [303, 409]
    assert len(logs(client)) == reviewed_before + 1


def test_every_review_is_a_signed_statement_in_the_export(client: TestClient, clock: Clock) -> None:
    review(client, FIRST, "again", answer="A first try.")
    clock.now += timedelta(minutes=11)
    review(client, FIRST, "good", answer="Overfit one small batch.")
    export = client.get("/portfolio/export.json").json()
    reviews = [s for s in export["statements"] if s["id"].startswith("drillbook:spaced-review:")]
    assert [s["verb"]["display"]["en"] for s in reviews] == ["rated", "rated"]
    assert [s["result"]["rating"] for s in reviews] == ["again", "good"]
    assert reviews[1]["result"]["response"] == "Overfit one small batch."
    assert reviews[1]["object"]["id"] == f"urn:drillbook:review-item:{FIRST}"
    assert reviews[1]["object"]["definition"]["name"]["en"] == all_items()[0].prompt
    assert reviews[1]["context"]["days_since_last_review"] > 0
    assert all(len(s["digest"]) == 64 for s in reviews)


def test_the_instructor_sees_due_overdue_retention_and_the_hardest_items(
    client: TestClient, clock: Clock
) -> None:
    from app.accounts.models import Role
    from tests.app.factories import add_cohort

    engine = engine_of(client)
    me = int(client.get("/api/session").json()["user_id"])
    ida = make_user(engine, "ida", Role.instructor)
    cohort = add_cohort(engine, ida.saved_id, name="Autumn", code="AUTUMN42", learners=[me])
    second = f"track:{all_items()[1].key}"
    review(client, FIRST, "again")
    clock.now += timedelta(minutes=11)
    review(client, FIRST, "good")
    review(client, second, "good")
    # Days later: one recalled, one forgotten; both reviews come a day or more after the last.
    clock.now = MONDAY + timedelta(days=30)
    review(client, FIRST, "good")
    review(client, second, "again")
    instructor = signed_in(client.app, "ida")  # type: ignore[arg-type]
    page = instructor.get(f"/cohorts/{cohort}").text
    assert re.search(r'id="cohort-retention">50%</strong>\s+of 2 reviews', page)
    row = re.search(r'<tr data-learner="learner-a">(.*?)</tr>', page, re.S)
    assert row
    cells = re.findall(r'<td class="num">([^<]*)</td>', row.group(1))
    assert cells == ["0", "0", "5", "50%", "—"]  # the one failed today is back in 10 minutes
    hardest = page.split('id="hardest-items"', 1)[1].split("</ol>", 1)[0]
    assert all_items()[0].prompt[:40] in hardest and "“again” 1 of 3 reviews" in hardest
    # Long after, both are overdue (due before that day began).
    clock.now = MONDAY + timedelta(days=400)
    page = instructor.get(f"/cohorts/{cohort}").text
    row = re.search(r'<tr data-learner="learner-a">(.*?)</tr>', page, re.S)
    assert row and re.findall(r'<td class="num">([^<]*)</td>', row.group(1))[:2] == ["2", "2"]
    # Curve rounds: answered ones, and how many the run bore out.
    from app.practice.round_models import DiagnosisRound
    from tests.app.factories import add_round

    add_round(engine, me, number=1)
    missed = add_round(engine, me, number=2)
    add_round(engine, me, answered=False, number=3)
    with Session(engine) as session:
        found = session.get(DiagnosisRound, missed)
        assert found is not None
        found.score = {**(found.score or {}), "leading_right": False}
        session.add(found)
        session.commit()
    page = instructor.get(f"/cohorts/{cohort}").text
    row = re.search(r'<tr data-learner="learner-a">(.*?)</tr>', page, re.S)
    assert row and re.findall(r'<td class="num">([^<]*)</td>', row.group(1))[-1] == "1 of 2"


def test_a_cohort_adds_its_own_items_for_its_learners_only(
    client: TestClient, clock: Clock
) -> None:
    from app.accounts.models import Role
    from tests.app.factories import add_cohort

    engine = engine_of(client)
    me = int(client.get("/api/session").json()["user_id"])
    ida = make_user(engine, "ida", Role.instructor)
    cohort = add_cohort(engine, ida.saved_id, name="Autumn", code="AUTUMN42", learners=[me])
    instructor = signed_in(client.app, "ida")  # type: ignore[arg-type]
    empty = instructor.post(f"/cohorts/{cohort}/review-items", data={"prompt": " ", "answer": ""})
    assert empty.status_code == 422
    assert 'aria-describedby="error-prompt"' in empty.text
    assert 'aria-describedby="error-answer"' in empty.text
    added = instructor.post(
        f"/cohorts/{cohort}/review-items",
        data={
            "prompt": "Why is the *first* loss near ln(10)? <script>alert(1)</script>",
            "answer": "Ten classes, **uniform** guesses.",
        },
        follow_redirects=False,
    )
    assert added.status_code == 303
    page = instructor.get(f"/cohorts/{cohort}").text
    assert "<em>first</em>" in page and "<script>alert" not in page
    key = ready_keys(client)[0]
    assert key.startswith("cohort:")  # before the track's new items
    assert len(ready_keys(client)) == NEW_PER_DAY
    shown = client.post(f"/practice/{key}/answer", data={"answer": "?", "seen_reviews": "0"})
    assert "<strong>uniform</strong>" in shown.text and "<script>alert" not in shown.text
    review(client, key, "good")
    assert key not in ready_keys(client)
    # A learner outside the cohort never meets it.
    make_user(engine, "learner-b")
    other = signed_in(client.app, "learner-b")  # type: ignore[arg-type]
    assert other.get(f"/practice/{key}").status_code == 404
    assert all(not k.startswith("cohort:") for k in ready_keys(other))


def test_the_study_path_ticks_by_evidence_only(client: TestClient, clock: Clock) -> None:
    from app.cases.models import CaseAttempt, CaseStage
    from tests.app.factories import add_attempt, add_case_attempt

    engine = engine_of(client)
    me = int(client.get("/api/session").json()["user_id"])

    def done() -> set[str]:
        page = client.get("/progress").text
        return set(re.findall(r'<li class="done" data-step="([^"]+)"', page))

    assert done() == set()
    assert "0 of " in client.get("/").text.split('id="path-summary"', 1)[1][:200]
    # A missed prediction does not tick the drill; a matched one ticks it only when the bug was
    # hidden from the learner (predicting the setup one picked oneself is exploration).
    add_attempt(engine, me, fixed=False, hidden_setup=True)  # predicted "fits", shows a bug
    assert "drill:overfit-one-batch" not in done()
    add_attempt(engine, me, fixed=True)
    assert "drill:overfit-one-batch" not in done()
    add_attempt(engine, me, fixed=True, hidden_setup=True)
    assert "drill:overfit-one-batch" in done()
    # A review rated "again" does not tick it; "good" does.
    review(client, "track:diagnostic-stack", "again")
    assert "review:diagnostic-stack" not in done()
    clock.now += timedelta(minutes=11)
    review(client, "track:diagnostic-stack", "good")
    assert "review:diagnostic-stack" in done()
    # A solved case ticks; a missed one (cause named wrongly) does not.
    solved, _ = add_case_attempt(engine, me)  # a-fresh-head, cause named
    assert "case:a-fresh-head" in done()
    with Session(engine) as session:
        case_row = session.get(CaseAttempt, solved)
        assert case_row is not None and case_row.stage == CaseStage.revealed
        case_row.score = {**(case_row.score or {}), "cause_named": False}
        session.add(case_row)
        session.commit()
    assert "case:a-fresh-head" not in done()
    # An answered round whose leading hypothesis the run bore out ticks the one-round step; an
    # unanswered or missed one does not, and five are needed for the last step.
    from app.practice.round_models import DiagnosisRound
    from tests.app.factories import add_round

    add_round(engine, me, answered=False, number=1)
    assert "rounds:1" not in done()
    missed = add_round(engine, me, number=2)
    with Session(engine) as session:
        round_row = session.get(DiagnosisRound, missed)
        assert round_row is not None
        round_row.score = {**(round_row.score or {}), "leading_right": False}
        session.add(round_row)
        session.commit()
    assert "rounds:1" not in done()
    for number in range(3, 7):
        add_round(engine, me, number=number)
        assert ("rounds:1" in done()) and (("rounds:5" in done()) is False)
    add_round(engine, me, number=7)
    assert {"rounds:1", "rounds:5"} <= done()


def move_due(client: TestClient, due: dict[str, datetime]) -> None:
    """Set the stored due dates of some of the learner's cards, by item key."""
    with Session(engine_of(client)) as session:
        for card in session.exec(select(ReviewCard).where(col(ReviewCard.item_key).in_(due))):
            card.due_at = due[card.item_key]
            session.add(card)
        session.commit()


def due_tomorrow(client: TestClient) -> str | None:
    found = re.search(r'id="due-tomorrow"><strong>(.*?)</strong>', client.get("/practice").text)
    return found.group(1) if found else None


def test_an_empty_day_says_how_many_are_due_tomorrow(client: TestClient, clock: Clock) -> None:
    keys = ready_keys(client)
    for key in keys:
        review(client, key, "good")  # every one due in days, none tomorrow
    assert ready_keys(client) == [] and due_tomorrow(client) is None
    tuesday = MONDAY.replace(hour=0) + timedelta(days=1)
    move_due(
        client,
        {
            keys[0]: MONDAY + timedelta(hours=10),  # later today: not tomorrow's
            keys[1]: tuesday,
            keys[2]: tuesday + timedelta(hours=23, minutes=59),
            keys[3]: tuesday + timedelta(days=1),  # Wednesday: not tomorrow's
        },
    )
    assert due_tomorrow(client) == "2 due tomorrow."
    # While something is ready now, the list is what to do: tomorrow's count waits.
    clock.now = MONDAY + timedelta(hours=10)
    assert ready_keys(client) == [keys[0]] and due_tomorrow(client) is None


def test_the_later_today_list_gives_titles_the_whole_line(client: TestClient, clock: Clock) -> None:
    review(client, FIRST, "again")
    page = client.get("/practice").text
    later = page.split('id="due-later"', 1)[1].split("</section>", 1)[0]
    assert f'<li data-item="{FIRST}">{all_items()[0].prompt[:20]}' in later
    # No kind column in this list, so nothing to set the title beside.
    assert '<ul class="due-list">' in later and "due-kind" not in later
    assert '<ol class="due-list due-kinds">' in page  # the ready list keeps its kind column
    css = (Path(__file__).parents[3] / "static" / "app.css").read_text()
    columned = [
        selector.strip()
        for selector, body in re.findall(r"([^{}]+)\{([^{}]*)\}", css)
        if "due-" in selector and "grid-template-columns" in body
    ]
    assert columned and all(selector.endswith(".due-kinds li") for selector in columned)


def test_a_new_learners_first_step_is_a_drill(client: TestClient) -> None:
    summary = client.get("/").text.split('id="path-summary"', 1)[1].split("</p>", 1)[0]
    assert 'Next: <a href="/drills/overfit-one-batch">' in summary
    steps = re.findall(r'data-step="([^"]+)"', client.get("/progress").text)
    assert steps[0] == "drill:overfit-one-batch"
