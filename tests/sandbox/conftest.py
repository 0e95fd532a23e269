"""Shared fixtures of the sandbox tests: a uid of the test's own, to count what a sandbox left."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from drills.sandbox import identity
from tests.sandbox.support import processes_of


@pytest.fixture
def own_uid(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """Run this test's sandboxes as a uid no other process uses, so that what is left of them
    afterwards (nothing, the tests assert) can be counted. Needs root, to switch to it."""
    if os.geteuid() != 0:
        pytest.skip("counting a sandbox's processes by uid needs root (to choose the uid)")
    # One uid per pytest-xdist worker: two of these tests running at once must not count each
    # other's sandboxes.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    uid = 61999 - int(worker or 0)
    assert processes_of(uid) == []
    monkeypatch.setattr(identity, "SANDBOX_UID", uid)
    monkeypatch.setattr(identity, "SANDBOX_GID", uid)
    yield uid
