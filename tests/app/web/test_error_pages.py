"""Errors reached from a page render a page in the site's layout with a way back; only /api/*
answers JSON."""

from collections.abc import Callable

from fastapi import APIRouter
from fastapi.testclient import TestClient

from app.accounts.models import Role
from app.core.config import Settings
from app.main import create_app
from tests.app.factories import add_user, engine_of, signed_in


def is_site_page(response: object, status: int) -> bool:
    text = response.text  # type: ignore[attr-defined]
    return (
        response.status_code == status  # type: ignore[attr-defined]
        and response.headers["content-type"].startswith("text/html")  # type: ignore[attr-defined]
        and 'class="topbar"' in text
        and 'href="/">Back to the drills</a>' in text
        and '"detail"' not in text
    )


def test_a_missing_page_is_a_page_and_a_missing_api_resource_is_json(client: TestClient) -> None:
    page = client.get("/drills/no-such-drill")
    assert is_site_page(page, 404) and "No drill called &#39;no-such-drill&#39;." in page.text
    nowhere = client.get("/nowhere")
    assert is_site_page(nowhere, 404) and "There is no page at this address" in nowhere.text
    api = client.get("/api/drills/no-such-drill")
    assert api.status_code == 404 and api.json() == {"detail": "No drill called 'no-such-drill'."}
    assert client.get("/api/nowhere").json() == {"detail": "Not Found"}


def test_refusals_wrong_methods_and_bad_values_are_pages(client: TestClient) -> None:
    refused = client.get("/cohorts")  # a learner at the instructors' page
    assert is_site_page(refused, 403) and "Only instructors can do this." in refused.text
    wrong_method = client.get("/logout")
    assert is_site_page(wrong_method, 405) and wrong_method.headers["allow"] == "POST"
    bad_value = client.get("/drills/overfit-one-batch/history", params={"page": "1\x00"})
    assert is_site_page(bad_value, 422) and "<li>page:" in bad_value.text
    assert client.get("/api/attempts/0").json()["detail"][0]["loc"] == ["path", "attempt_id"]


def test_an_admin_refused_a_change_reads_why_beside_that_role(anonymous: TestClient) -> None:
    engine = engine_of(anonymous)
    admin_id = add_user(engine, "root", Role.admin)
    admin = signed_in(anonymous.app, "root")  # type: ignore[arg-type]
    refused = admin.post(
        f"/admin/users/{admin_id}/role", data={"role": "learner"}, follow_redirects=False
    )
    # The users page again (not an error page), the refusal beside the role it refused.
    assert refused.status_code == 422 and 'id="users"' in refused.text
    assert f'aria-describedby="error-role-{admin_id}"' in refused.text
    assert f'id="error-role-{admin_id}">an admin cannot demote themselves<' in refused.text
    assert is_site_page(admin.post("/admin/users/999/role", data={"role": "learner"}), 404)
    admin.close()


def test_a_crash_is_a_page_without_the_traceback(make_settings: Callable[..., Settings]) -> None:
    app = create_app(make_settings())
    broken = APIRouter()

    @broken.get("/broken")
    @broken.get("/api/broken")
    def crash() -> None:
        raise RuntimeError("secret internals")

    app.include_router(broken)
    with TestClient(app, raise_server_exceptions=False) as browser:
        page = browser.get("/broken")
        assert is_site_page(page, 500) and "secret internals" not in page.text
        api = browser.get("/api/broken")
        assert api.status_code == 500 and api.json() == {"detail": "Internal Server Error"}


def test_the_api_schema_link_is_kept_out_of_the_learners_navigation(client: TestClient) -> None:
    assert 'href="/openapi.json"' not in client.get("/").text
    engine = engine_of(client)
    add_user(engine, "root", Role.admin)
    admin = signed_in(client.app, "root")  # type: ignore[arg-type]
    assert 'href="/openapi.json"' in admin.get("/").text
    admin.close()
