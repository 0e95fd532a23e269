"""Fixtures of the app tests beyond tests/conftest.py's."""

from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient

from app.web.deps import get_now
from tests.app.clock import MONDAY, Clock


@pytest.fixture
def clock(client: TestClient) -> Iterator[Clock]:
    """The app's "now", from MONDAY on, moved by setting `clock.now`."""
    ticking = Clock(MONDAY)
    client.app.dependency_overrides[get_now] = ticking  # type: ignore[attr-defined]
    yield ticking
    client.app.dependency_overrides.pop(get_now, None)  # type: ignore[attr-defined]
