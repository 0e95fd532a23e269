"""A case answered in code (issue 28): the learner names the cause and submits the exercise's
loop; the exercise's judge decides, and the fix point needs the drawn cause, its own exercise
and a pass. Real runs: the symptom run on the cluster, the code in the sandbox."""

from __future__ import annotations

import difflib
import re
import threading
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, col, select

from app.cases.models import CaseAttempt, CaseRun, CaseRunKind
from app.diagnosis.shown import option_of
from app.exercises.models import ExerciseRun
from app.runs.models import Attempt
from drills.cases.evidence import leaks
from drills.cases.registry import get_case
from drills.exercises.registry import get_exercise
from drills.sandbox import available
from tests.app.cases.test_case_fixes import diagnosis_of
from tests.app.cases.test_cases import case_json, engine_of, open_case, wait_until_runs_end
from tests.conftest import log_in, make_user

pytestmark = pytest.mark.skipif(available() is not None, reason=f"no sandbox: {available()}")

CASE = get_case("a-sanity-check")  # overfit-one-batch: labels-reshuffled has a loop to fix
EXERCISE = get_exercise("overfit-shuffled-pairs")
OWN, OTHER, NO_LOOP = "labels-reshuffled", "loop-is-sound", "noise-left-on"


def ready_case(client: TestClient, cause: str) -> int:
    """An attempt at CASE that drew `cause` (set where the server keeps it), diagnosed."""
    case_attempt_id = open_case(client, CASE.key)
    with Session(engine_of(client)) as session:
        stored = session.get(CaseAttempt, case_attempt_id)
        assert stored is not None
        stored.cause = cause
        session.add(stored)
        session.commit()
    wait_until_runs_end(client, case_attempt_id)
    diagnosed = client.post(f"/cases/attempts/{case_attempt_id}/diagnosis", data=diagnosis_of(CASE))
    assert diagnosed.is_success, diagnosed.text
    return case_attempt_id


def url(case_attempt_id: int, slug: str = EXERCISE.slug) -> str:
    return f"/cases/attempts/{case_attempt_id}/code/{slug}"


def submit(client: TestClient, case_attempt_id: int, named: str, code: str) -> Any:
    form = {"cause": option_of(CASE.case_set, named), "code": code}
    return client.post(url(case_attempt_id), data=form, follow_redirects=False)


def revealed(client: TestClient, case_attempt_id: int) -> tuple[dict[str, Any], str]:
    wait_until_runs_end(client, case_attempt_id, timeout=240)
    with Session(engine_of(client)) as session:
        stored = session.get(CaseAttempt, case_attempt_id)
        assert stored is not None and stored.stage == "revealed", stored
        score = dict(stored.score or {})
    return score, client.get(f"/cases/attempts/{case_attempt_id}").text


def stored_code_runs(client: TestClient, case_attempt_id: int) -> list[ExerciseRun]:
    with Session(engine_of(client)) as session:
        return list(
            session.exec(
                select(ExerciseRun)
                .join(Attempt, col(Attempt.id) == ExerciseRun.attempt_id)
                .where(Attempt.case_attempt_id == case_attempt_id)
            ).all()
        )


def test_the_right_cause_and_passing_code_earn_the_fix_point(client: TestClient) -> None:
    case_attempt_id = ready_case(client, OWN)
    page = client.get(f"/cases/attempts/{case_attempt_id}").text
    assert f'href="{url(case_attempt_id)}"' in page
    assert leaks(CASE, page) == []  # the link's words name no drill
    editor = client.get(url(case_attempt_id))
    assert editor.status_code == 200 and "data-code-editor" in editor.text
    assert submit(client, case_attempt_id, OWN, EXERCISE.solution).status_code == 303
    score, page = revealed(client, case_attempt_id)
    assert score["cause_named"] and score["fix_verified"] and score["exercise_fits"], score
    assert score["exercise"] == EXERCISE.slug
    (run,) = stored_code_runs(client, case_attempt_id)
    assert run.judgement == "passed" and run.code == EXERCISE.solution
    # The reveal: both diffs side by side, and the judge's checks.
    assert 'id="learner-diff"' in page and 'id="reference-diff"' in page
    assert "order = torch.randperm(len(features))" in page
    assert "check-pass" in page and "the judge passed your code" in page
    after = client.get(url(case_attempt_id)).text
    assert "The verdict for this attempt is in" in after and "code-verdict-form" not in after


@pytest.mark.parametrize(
    ("drawn", "named", "code", "why"),
    [
        (OWN, OWN, "starter", "The judge did not pass your code"),
        (OWN, OTHER, "solution", "named another cause"),
        (NO_LOOP, NO_LOOP, "solution", "no loop to fix in code"),
    ],
    ids=["failing-code", "wrong-cause", "another-causes-loop"],
)
def test_a_wrong_cause_failing_code_or_another_loop_earn_no_fix_point(
    client: TestClient, drawn: str, named: str, code: str, why: str
) -> None:
    case_attempt_id = ready_case(client, drawn)
    text = EXERCISE.starter if code == "starter" else EXERCISE.solution
    assert submit(client, case_attempt_id, named, text).status_code == 303
    score, page = revealed(client, case_attempt_id)
    assert not score["fix_verified"], score
    assert score["cause_named"] == (named == drawn)
    assert why in page.replace("&#39;", "'")


def test_bad_input_names_the_field_and_stores_nothing(client: TestClient) -> None:
    case_attempt_id = open_case(client, CASE.key)
    # Before the diagnosis: refused, and nothing stored.
    early = submit(client, case_attempt_id, OWN, EXERCISE.solution)
    assert early.status_code == 409 and "diagnosis" in early.text
    assert "The diagnosis comes first" in client.get(url(case_attempt_id)).text
    wait_until_runs_end(client, case_attempt_id)
    diagnosed = client.post(f"/cases/attempts/{case_attempt_id}/diagnosis", data=diagnosis_of(CASE))
    assert diagnosed.is_success
    cause = option_of(CASE.case_set, OWN)
    bad: list[tuple[dict[str, str], str]] = [
        ({"code": EXERCISE.solution}, "cause:"),
        ({"cause": "cause-99", "code": EXERCISE.solution}, "cause:"),
        ({"cause": OWN, "code": EXERCISE.solution}, "cause:"),  # a key, not an option
        ({"cause": cause}, "code:"),
        ({"cause": cause, "code": "   \n"}, "code:"),
        # Past the form's own bound on the field: 413, naming it (app/web/forms.py).
        ({"cause": cause, "code": "x" * 64_001}, "code"),
        ({"cause": cause, "code": "print(1)\x00"}, "code:"),
    ]
    for form, named in bad:
        answer = client.post(url(case_attempt_id), data=form, follow_redirects=False)
        assert answer.status_code in (413, 422), (form.keys(), answer.status_code)
        assert named in answer.text, (form.keys(), answer.text[-500:])
    good = {"cause": cause, "code": EXERCISE.solution}
    # An exercise of another drill, or no exercise at all: not this case's.
    assert client.post(url(case_attempt_id, "optimizer-new-head"), data=good).status_code == 404
    assert client.post(url(case_attempt_id, "no-such-exercise"), data=good).status_code == 404
    assert case_json(client, case_attempt_id)["stage"] == "investigating"
    assert stored_code_runs(client, case_attempt_id) == []
    with Session(engine_of(client)) as session:
        kinds = session.exec(
            select(CaseRun.kind).where(CaseRun.case_attempt_id == case_attempt_id)
        ).all()
    assert list(kinds) == [CaseRunKind.symptom]


def test_two_submissions_at_once_make_one_verdict(client: TestClient) -> None:
    case_attempt_id = ready_case(client, OWN)
    barrier = threading.Barrier(2)
    codes: list[int] = []

    def press() -> None:
        barrier.wait()
        codes.append(submit(client, case_attempt_id, OWN, EXERCISE.solution).status_code)

    threads = [threading.Thread(target=press) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(codes) == [303, 409]
    score, _ = revealed(client, case_attempt_id)
    assert score["fix_verified"]
    assert len(stored_code_runs(client, case_attempt_id)) == 1
    with Session(engine_of(client)) as session:
        kinds = session.exec(
            select(CaseRun.kind).where(CaseRun.case_attempt_id == case_attempt_id)
        ).all()
    assert sorted(kinds).count(CaseRunKind.fix) == 1


def test_a_run_no_worker_takes_leaves_the_case_answered(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    case_attempt_id = ready_case(client, OWN)

    def refuse(**run: Any) -> None:
        raise ConnectionError("the scheduler is gone")

    monkeypatch.setattr(client.app.state.runner, "submit_exercise", refuse)  # type: ignore[attr-defined]
    assert submit(client, case_attempt_id, OWN, EXERCISE.solution).status_code == 303
    score, page = revealed(client, case_attempt_id)
    assert not score["fix_verified"] and score["cause_named"]
    assert "ended before the judge could read it" in page


def test_nothing_before_the_reveal_depends_on_the_drawn_cause(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two attempts at the case, one drawn with a cause that has a loop to fix and one without:
    their pages (ids aside) are the same, the code verdict's link and page included. The runs
    are kept from running, so that no evidence differs either."""
    monkeypatch.setattr(client.app.state.runner, "submit", lambda **run: None)  # type: ignore[attr-defined]
    pages: list[str] = []
    for name, cause in (("learner-own", OWN), ("learner-none", NO_LOOP)):
        make_user(engine_of(client), name)
        log_in(client, name)
        case_attempt_id = open_case(client, CASE.key)
        with Session(engine_of(client)) as session:
            stored = session.get(CaseAttempt, case_attempt_id)
            assert stored is not None
            stored.cause = cause
            session.add(stored)
            session.commit()
        form = diagnosis_of(CASE)
        assert client.post(f"/cases/attempts/{case_attempt_id}/diagnosis", data=form).is_success
        views = [
            client.get(f"/cases/attempts/{case_attempt_id}").text,
            client.get(f"/cases/attempts/{case_attempt_id}/body").text,
            client.get(url(case_attempt_id)).text,
        ]
        shown = re.sub(name, "<learner>", "\n".join(views), flags=re.IGNORECASE)
        shown = re.sub(r"/cases/(attempts|runs)/\d+", r"/cases/\1/<id>", shown)
        shown = re.sub(r'(id="case-run-|data-attempt="|nonce-?[=-]?"?)[\w-]+', r"\1<id>", shown)
        # The session's CSRF token and the style nonce are per session and per response.
        # (Not \b before it: a token may begin with "-", where no word boundary falls.)
        pages.append(re.sub(r"(?<![A-Za-z0-9_-])[A-Za-z0-9_-]{40,}", "<token>", shown))
    assert "code-verdicts" in pages[0] and 'id="code-verdict-form"' in pages[0]
    differ = list(difflib.unified_diff(pages[0].splitlines(), pages[1].splitlines()))
    assert pages[0] == pages[1], "\n".join(differ[:40])


def test_a_listed_fix_no_worker_takes_leaves_the_case_revealed(
    client: TestClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The list's fix ends as a code verdict's does when no worker takes it: failed, through
    the one way runs end, so the case is scored and revealed, not left at "fixing"."""
    case_attempt_id = ready_case(client, OWN)

    def refuse(**run: Any) -> None:
        raise ConnectionError("the scheduler is gone")

    monkeypatch.setattr(client.app.state.runner, "submit", refuse)  # type: ignore[attr-defined]
    form = {"cause": option_of(CASE.case_set, OWN), "fix": CASE.fix_of(OWN)}
    answered = client.post(
        f"/cases/attempts/{case_attempt_id}/verdict", data=form, follow_redirects=False
    )
    assert answered.status_code in (200, 303), answered.text
    score, _ = revealed(client, case_attempt_id)
    assert score["cause_named"] and not score["fix_verified"]
