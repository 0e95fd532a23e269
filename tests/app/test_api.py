"""The JSON API against real worker processes: create, follow, fetch, and reject bad input."""

import json
import subprocess
import sys
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlmodel import Session, func, select

from app.runs.models import Attempt, MetricPoint
from drills.core.seed import MAX_SEED
from tests.app.factories import EXERCISE, visitor
from tests.conftest import PREDICTION, wait_until_final


def attempt_count(client: TestClient) -> int:
    with Session(client.app.state.engine) as session:  # type: ignore[attr-defined]
        return session.exec(select(func.count()).select_from(Attempt)).one()


def create(client: TestClient, **body: Any) -> dict[str, Any]:
    response = client.post(
        "/api/attempts", json={"drill": "overfit-one-batch", **PREDICTION, **body}
    )
    assert response.status_code == 202, response.text
    created: dict[str, Any] = response.json()
    return created


def test_drills_are_listed_with_their_knob_schema(client: TestClient) -> None:
    drills = client.get("/api/drills").json()
    overfit = next(d for d in drills if d["slug"] == "overfit-one-batch")
    knobs = {knob["name"]: knob for knob in overfit["knobs"]}
    assert set(knobs) >= {"examples", "bug", "lr", "steps"}
    assert "shuffled-labels" in knobs["bug"]["choices"]
    assert client.get("/api/drills/overfit-one-batch").json()["slug"] == "overfit-one-batch"
    assert client.get("/api/drills/no-such-drill").status_code == 404


def test_a_created_attempt_runs_in_a_worker_and_stores_its_evidence(client: TestClient) -> None:
    created = create(client, knobs={"bug": "shuffled-labels"}, seed=4)
    assert created["status"] == "queued"
    assert created["urls"]["events"] == f"/api/attempts/{created['id']}/events"
    assert "--set bug=shuffled-labels" in created["command"] and "--seed 4" in created["command"]

    attempt = wait_until_final(client, created["id"])
    assert attempt["status"] == "succeeded", attempt["error"]
    assert attempt["hypothesis"] == "fits" and attempt["prediction"] == PREDICTION["prediction"]
    assert attempt["knobs"] == {"examples": 8, "bug": "shuffled-labels", "lr": 0.01, "steps": 200}
    assert len(attempt["metrics"]["loss"]) == 200
    signature = attempt["signature"]
    # Shuffled labels stall at the entropy of the batch's labels (ln 4 here), not at zero.
    assert (
        abs(signature["final_loss"] - signature["label_entropy"])
        < 0.15 * signature["label_entropy"]
    )
    assert attempt["observed_hypothesis"] != "fits" and attempt["prediction_matched"] is False
    assert attempt["environment"]["threads"] == 1
    assert {row["name"] for row in attempt["diagnostics"]["parameters"]}
    assert attempt["worker"].startswith("tls://127.0.0.1:")
    assert attempt["started_at"] and attempt["finished_at"] and attempt["compute_s"] > 0


def test_the_stored_command_replays_to_the_same_digest(client: TestClient) -> None:
    attempt = wait_until_final(client, create(client, knobs={"steps": 60}, seed=7)["id"])
    replay = subprocess.run(
        [sys.executable, *attempt["command"].split()[1:], "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(replay.stdout)["digest"] == attempt["digest"]


def test_the_event_stream_delivers_points_then_done(client: TestClient) -> None:
    created = create(client, knobs={"steps": 300})
    events: list[tuple[str, str]] = []
    with client.stream("GET", created["urls"]["events"]) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        name = ""
        for line in response.iter_lines():
            if line.startswith("event:"):
                name = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                events.append((name, line.split(":", 1)[1].strip()))
                if name == "done":
                    break
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "done" and "points" in kinds
    streamed = [p for kind, data in events if kind == "points" for p in json.loads(data)["points"]]
    loss_steps = [step for name, step, _ in streamed if name == "loss"]
    assert loss_steps == sorted(loss_steps) and len(set(loss_steps)) == len(loss_steps)
    assert events[-1][1] == "succeeded"


def test_a_finished_stream_replays_everything_stored(client: TestClient) -> None:
    created = create(client, knobs={"steps": 50})
    wait_until_final(client, created["id"])
    body = client.get(created["urls"]["events"]).text
    assert "event: done" in body and body.count('"loss"') == 50


@pytest.mark.parametrize(
    ("body", "status", "names"),
    [
        ({"drill": "no-such-drill"}, 404, "no-such-drill"),
        ({"knobs": {"colour": "red"}}, 422, "colour"),
        ({"knobs": {"lr": "fast"}}, 422, "lr"),
        ({"knobs": {"lr": 1e9}}, 422, "lr"),
        ({"knobs": {"steps": 2.5}}, 422, "steps"),
        ({"knobs": {"examples": 3}}, 422, "examples"),
        ({"knobs": {"bug": "gremlins"}}, 422, "bug"),
        ({"hypothesis": "telepathy"}, 422, "hypothesis"),
        ({"prediction": "   "}, 422, "prediction"),
        ({"prediction": "x" * 2001}, 422, "prediction"),
        ({"seed": -1}, 422, "seed"),
        ({"seed": MAX_SEED + 1}, 422, "seed"),
        ({"seed": True}, 422, "seed"),  # pydantic alone read it as seed 1
    ],
)
def test_bad_input_is_rejected_by_name_and_stores_nothing(
    client: TestClient, body: dict[str, Any], status: int, names: str
) -> None:
    before = attempt_count(client)
    response = client.post(
        "/api/attempts", json={"drill": "overfit-one-batch", **PREDICTION, **body}
    )
    assert response.status_code == status
    assert names in response.text
    assert attempt_count(client) == before


@pytest.mark.parametrize("literal", ["NaN", "Infinity", "-Infinity"])
def test_a_non_finite_number_in_the_body_is_a_422_not_a_500(
    client: TestClient, literal: str
) -> None:
    # Python's JSON parser accepts these literals; the 422 must still be strict JSON.
    before = attempt_count(client)
    body = (
        '{"drill": "overfit-one-batch", "hypothesis": "fits", "prediction": "zero",'
        f' "seed": {literal}}}'
    )
    response = client.post(
        "/api/attempts", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 422
    assert response.json()["detail"][0]["loc"] == ["body", "seed"]
    assert attempt_count(client) == before


def test_the_largest_seed_a_drill_takes_is_stored_and_replayed_as_given(
    client: TestClient,
) -> None:
    # One bound for the web layer and the drills: a seed the form accepts never fails in the
    # worker, and one the drills accept is not refused by the form.
    from drills.core import runner  # the test process may import torch; the web process never

    assert runner.MAX_SEED == MAX_SEED
    created = create(client, knobs={"steps": 10}, seed=MAX_SEED)
    attempt = wait_until_final(client, created["id"])
    assert attempt["seed"] == MAX_SEED and attempt["status"] == "succeeded", attempt
    assert f"--seed {MAX_SEED}" in attempt["command"]


def test_a_missing_prediction_is_a_422(client: TestClient) -> None:
    response = client.post(
        "/api/attempts", json={"drill": "overfit-one-batch", "hypothesis": "fits"}
    )
    assert response.status_code == 422 and "prediction" in response.text


def test_an_unknown_attempt_is_a_404(client: TestClient) -> None:
    assert client.get("/api/attempts/999999").status_code == 404
    assert client.get("/api/attempts/999999/events").status_code == 404


def test_metric_points_are_stored_once_per_step(client: TestClient) -> None:
    attempt = wait_until_final(client, create(client, knobs={"steps": 40})["id"])
    with Session(client.app.state.engine) as session:  # type: ignore[attr-defined]
        steps = session.exec(
            select(MetricPoint.step).where(
                MetricPoint.attempt_id == attempt["id"], MetricPoint.name == "loss"
            )
        ).all()
    assert sorted(steps) == list(range(40))


def test_openapi_documents_the_api(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    assert {
        "/api/drills",
        "/api/drills/{slug}",
        "/api/attempts",
        "/api/attempts/{attempt_id}",
        "/api/attempts/{attempt_id}/events",
    } <= set(paths)


def test_text_the_database_cannot_store_is_a_422_naming_the_field(client: TestClient) -> None:
    before = attempt_count(client)
    for prediction, problem in (("\\ud800", "lone surrogate"), ("\\u0000", "NUL character")):
        # Sent as raw JSON: httpx itself cannot encode a lone surrogate.
        body = '{"drill": "overfit-one-batch", "hypothesis": "fits", "prediction": "%s"}'
        response = client.post(
            "/api/attempts",
            content=(body % f"loss {prediction} falls").encode(),
            headers={"Content-Type": "application/json"},
        )
        assert response.status_code == 422, response.text
        [error] = response.json()["detail"]
        assert error["loc"] == ["body", "prediction"] and problem in error["msg"]
    knob_name = client.post(
        "/api/attempts",
        content=b'{"drill": "overfit-one-batch", "hypothesis": "fits", "prediction": "p",'
        b' "knobs": {"\\udfff": 1}}',
        headers={"Content-Type": "application/json"},
    )
    assert knob_name.status_code == 422
    assert knob_name.json()["detail"][0]["loc"] == ["body", "knobs", "'\\udfff'"]
    assert attempt_count(client) == before


def test_json_nested_too_deeply_is_a_400(client: TestClient) -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    response = client.post(
        "/api/attempts", content=deep, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400 and "parsing the body" in response.json()["detail"]


def api_answers(client: TestClient) -> dict[tuple[str, str], set[int]]:
    """The error statuses each API route really gives, one request per status."""
    # The longest run the drill allows (seconds, not the default's fraction of one): it must
    # still be unfinished when the requests below are done and the cancel comes. An idle worker
    # finished a default run first once, on a fast day.
    attempt_id = create(client, knobs={"steps": 2000})["id"]
    anonymous = visitor(client.app)  # type: ignore[arg-type]
    body = {"drill": "overfit-one-batch", **PREDICTION}
    nul = {"q": "\x00"}

    def oversized() -> Any:
        for _ in range(25):
            yield b" " * (1024 * 1024)

    answers = {
        ("get", "/api/session"): [
            anonymous.get("/api/session"),
            client.get("/api/session", params=nul),
        ],
        ("get", "/api/drills"): [client.get("/api/drills", params=nul)],
        ("get", "/api/drills/{slug}"): [
            client.get("/api/drills/no-such-drill"),
            client.get("/api/drills/overfit-one-batch", params=nul),
        ],
        ("post", "/api/attempts"): [
            client.post(
                "/api/attempts",
                content=b"[" * 100_000,
                headers={"Content-Type": "application/json"},
            ),
            anonymous.post("/api/attempts", json=body),
            client.post("/api/attempts", json=body, headers={"X-CSRF-Token": "wrong"}),
            client.post("/api/attempts", json=body | {"drill": "no-such-drill"}),
            client.post(
                "/api/attempts",
                content=oversized(),
                headers={"Content-Type": "application/json"},
            ),
            client.post("/api/attempts", json=body | {"seed": -1}),
        ],
    }
    for path in ("/api/attempts/{attempt_id}", "/api/attempts/{attempt_id}/events"):
        answers[("get", path)] = [
            anonymous.get(path.format(attempt_id=attempt_id)),
            client.get(path.format(attempt_id=999_999)),
            client.get(path.format(attempt_id=2**64)),
        ]
    case_attempt = "/api/cases/attempts/{case_attempt_id}"
    answers[("get", case_attempt)] = [
        anonymous.get(case_attempt.format(case_attempt_id=1)),
        client.get(case_attempt.format(case_attempt_id=999_999)),
        client.get(case_attempt.format(case_attempt_id=2**64)),
    ]
    cancel = "/api/attempts/{attempt_id}/cancel"
    cancelled = client.post(cancel.format(attempt_id=attempt_id))
    assert cancelled.status_code == 202, cancelled.text
    wait_until_final(client, attempt_id)
    answers[("post", cancel)] = [
        anonymous.post(cancel.format(attempt_id=attempt_id)),
        client.post(cancel.format(attempt_id=attempt_id), headers={"X-CSRF-Token": "wrong"}),
        client.post(cancel.format(attempt_id=999_999)),
        client.post(cancel.format(attempt_id=attempt_id)),  # ended: 409
        client.post(cancel.format(attempt_id=2**64)),
    ]
    answers |= exercise_answers(client, anonymous, oversized)
    anonymous.close()
    return {route: {response.status_code for response in got} for route, got in answers.items()}


def exercise_answers(
    client: TestClient, anonymous: TestClient, oversized: Callable[[], Any]
) -> dict[tuple[str, str], list[Any]]:
    nul = {"q": "\x00"}
    slug = f"/api/exercises/{EXERCISE}"
    code = {"code": "print('hello')"}
    answers: dict[tuple[str, str], list[Any]] = {
        ("get", "/api/exercises"): [client.get("/api/exercises", params=nul)],
        ("get", "/api/exercises/{slug}"): [
            anonymous.get(slug),
            client.get("/api/exercises/no-such-exercise"),
            client.get(slug, params=nul),
        ],
        ("post", "/api/exercises/{slug}/runs"): [
            client.post(
                f"{slug}/runs", content=b"[" * 100_000, headers={"Content-Type": "application/json"}
            ),
            anonymous.post(f"{slug}/runs", json=code),
            client.post(f"{slug}/runs", json=code, headers={"X-CSRF-Token": "wrong"}),
            client.post("/api/exercises/no-such-exercise/runs", json=code),
            client.post(
                f"{slug}/runs", content=oversized(), headers={"Content-Type": "application/json"}
            ),
            client.post(f"{slug}/runs", json={}),
        ],
        ("post", "/api/exercises/{slug}/hints"): [
            anonymous.post(f"{slug}/hints"),
            client.post(f"{slug}/hints", headers={"X-CSRF-Token": "wrong"}),
            client.post("/api/exercises/no-such-exercise/hints"),
            client.post(f"{slug}/hints", json={"rung": 0}),
        ],
        ("post", "/api/exercises/{slug}/solution"): [
            anonymous.post(f"{slug}/solution"),
            client.post(f"{slug}/solution", headers={"X-CSRF-Token": "wrong"}),
            client.post("/api/exercises/no-such-exercise/solution"),
            client.post(f"{slug}/solution"),  # not earned yet: 409
            client.post(f"{slug}/solution", params=nul),
        ],
    }
    for path in (
        "/api/exercises/runs/{run_id}",
        "/api/exercises/runs/{run_id}/events",
        "/api/exercises/runs/{run_id}/code",
    ):
        answers[("get", path)] = [
            anonymous.get(path.format(run_id=1)),
            client.get(path.format(run_id=999_999)),
            client.get(path.format(run_id=2**64)),
        ]
    return answers


def test_openapi_lists_exactly_the_errors_each_api_route_gives(client: TestClient) -> None:
    paths = client.get("/openapi.json").json()["paths"]
    declared = {
        (method, path): {int(code) for code in operation["responses"] if code.startswith("4")}
        for path, operations in paths.items()
        if path.startswith("/api/")
        for method, operation in operations.items()
    }
    assert declared == api_answers(client)
    # Each one says what it means and that its body carries `detail`.
    schema = client.get("/openapi.json").json()["components"]["schemas"]["ErrorBody"]
    assert "detail" in schema["properties"]
    for (method, path), codes in declared.items():
        for code in codes:
            answer = paths[path][method]["responses"][str(code)]
            assert answer["description"], (path, code)
            assert answer["content"]["application/json"]["schema"]["$ref"].endswith("/ErrorBody")
