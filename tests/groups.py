"""Tests that share a fixture wider than a test run in one test process under
`pytest -n 2 --dist loadgroup`, so that the fixture is set up once: the browser tests' server and
browser, a module's world of users and runs.

pytest-xdist's own loadgroup reads an `xdist_group` marker through a suffix it writes into each
test's node id in the test process. Since pytest 9.2 keeps node ids structured, that write no
longer takes effect and every test is handed out on its own, silently
(pytest-dev/pytest-xdist#1386). So the groups take another road: each test process writes the
group of every test it collected to a file, and the scheduler, which runs in the controlling
process once every test process has collected, reads them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from xdist.remote import Producer
from xdist.scheduler import LoadScopeScheduling

FOLDER_KEY = "drillbook_groups"  # the folder the test processes write their groups into


def shared_fixture_group(item: pytest.Item, root: str) -> str | None:
    """Where the widest fixture an item shares with other tests is defined (a module-scoped
    fixture's module, or tests/browser for its session's server and browser). The root
    conftest's session fixtures (the cluster, the template database) are left out: every test
    process has its own. `root` is that conftest's baseid, its folder ("tests", not "")."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return None
    shared: list[tuple[str, str]] = [
        (definition.scope, definition.baseid)
        for definitions in info.name2fixturedefs.values()
        for definition in definitions
        if definition.scope in ("module", "package", "session")
        and definition.baseid not in ("", root)
    ]
    if not shared:
        return None
    scope_order = {"session": 0, "package": 1, "module": 2}
    return min(shared, key=lambda found: scope_order[found[0]])[1]


def write_groups(config: pytest.Config, items: list[pytest.Item], root: str) -> None:
    """In a test process of `-n 2 --dist loadgroup`: the group of every test it collected."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is None or FOLDER_KEY not in workerinput:
        return  # not a test process of a grouped run
    groups = {
        item.nodeid: group
        for item in items
        if (group := shared_fixture_group(item, root)) is not None
    }
    folder = Path(workerinput[FOLDER_KEY])
    written = folder / f"{workerinput['workerid']}.json.part"
    written.write_text(json.dumps(groups))
    written.rename(written.with_suffix(""))  # whole or not at all


class SharedFixtureScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """xdist's load-by-scope scheduling with the groups the test processes wrote as scopes; a
    test in no group is a scope of its own (handed out alone, as `--dist load` would)."""

    def __init__(self, config: pytest.Config, folder: Path, log: Producer | None = None) -> None:
        super().__init__(config, log)
        self.folder = folder
        self.groups: dict[str, str] | None = None

    def _split_scope(self, nodeid: str) -> str:
        if self.groups is None:
            # First asked once every test process has collected, so every file is written.
            self.groups = {}
            for written in sorted(self.folder.glob("*.json")):
                self.groups.update(json.loads(written.read_text()))
        return self.groups.get(nodeid, nodeid)
