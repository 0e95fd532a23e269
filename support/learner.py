"""A browser-like client of a running Drillbook server, for benchmarks and load tests.

Standard library only (urllib), so it measures the server, not a client library.
"""

import http.cookiejar
import json
import re
import time
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from typing import Any

CSRF_FIELD = re.compile(r'name="csrf_token" value="([^"]+)"')


class Session:
    """A logged-in browser-like session: cookie jar plus the CSRF token for POSTs."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
        )
        self.csrf_token = ""

    @classmethod
    def logged_in(cls, url: str, username: str, password: str) -> "Session":
        session = cls(url)
        session.submit_form("/login", {"username": username, "password": password})
        session.read_csrf_token()
        return session

    @classmethod
    def registered(cls, url: str, username: str, password: str) -> "Session":
        session = cls(url)
        session.submit_form(
            "/register",
            {
                "username": username,
                "display_name": username,
                "password": password,
                "password_again": password,
            },
        )
        session.read_csrf_token()
        return session

    def submit_form(self, path: str, fields: dict[str, str]) -> None:
        """GET the form's page for its CSRF token, then POST the form as a browser does."""
        with self.opener.open(f"{self.url}{path}", timeout=60) as page:
            token = CSRF_FIELD.search(page.read().decode())
        assert token is not None, f"no CSRF token on {path}"
        body = urllib.parse.urlencode(fields | {"csrf_token": token.group(1)}).encode()
        self.opener.open(f"{self.url}{path}", body, timeout=60).close()

    def read_csrf_token(self) -> None:
        with self.opener.open(f"{self.url}/api/session", timeout=60) as response:
            self.csrf_token = json.load(response)["csrf_token"]

    def open(
        self,
        path: str,
        body: dict[str, Any] | None = None,
        timeout: float = 60,
        headers: dict[str, str] | None = None,
    ) -> Any:
        data = None if body is None else json.dumps(body).encode()
        sent = {"Content-Type": "application/json", "X-CSRF-Token": self.csrf_token}
        request = urllib.request.Request(self.url + path, data=data, headers=sent | (headers or {}))
        return self.opener.open(request, timeout=timeout)

    def get_json(self, path: str) -> Any:
        with self.open(path) as response:
            return json.load(response)

    def post_json(self, path: str, body: dict[str, Any]) -> Any:
        with self.open(path, body) as response:
            return json.load(response)


@dataclass
class StreamLog:
    """What one event stream delivered."""

    events: list[tuple[str, str]] = field(default_factory=list)
    first_point_at: float | None = None  # time.perf_counter()
    done_at: float | None = None
    last_event_id: str | None = None  # as a browser keeps it, to send back on reconnecting

    @property
    def points_events(self) -> list[str]:
        return [data for event, data in self.events if event == "points"]

    @property
    def points(self) -> list[tuple[str, int]]:
        """Every (metric, step) the stream sent, repeats included."""
        return [
            (name, int(step))
            for event, data in self.events
            if event == "points"
            for name, step, _ in json.loads(data)["points"]
        ]


def follow(
    session: Session,
    events_path: str,
    timeout: float = 300,
    *,
    last_event_id: str | None = None,
    hang_up_after_points: int | None = None,
) -> StreamLog:
    """Read an attempt's event stream until `done` (or until the server ends it). As a browser
    does: keep the last event id, and send it back (`last_event_id`) when reconnecting.
    `hang_up_after_points`: drop the connection after that many `points` events."""
    log = StreamLog(last_event_id=last_event_id)
    headers = {"Last-Event-ID": last_event_id} if last_event_id else {}
    with session.open(events_path, timeout=timeout, headers=headers) as stream:
        event = ""
        for raw in stream:
            line = raw.decode().strip()
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("id:"):
                log.last_event_id = line.split(":", 1)[1].strip()
            elif line.startswith("data:"):
                log.events.append((event, line.split(":", 1)[1].strip()))
                if event == "points" and log.first_point_at is None:
                    log.first_point_at = time.perf_counter()
                if event == "done":
                    log.done_at = time.perf_counter()
                    return log
                if event == "points" and len(log.points_events) == hang_up_after_points:
                    return log
    return log
