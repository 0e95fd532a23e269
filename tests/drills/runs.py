"""One real run per (drill, resolved knobs, seed) in a test process, shared by the drill tests.

A run is a pure function of those three on one machine (the determinism tests in test_runner
and test_cli prove it, and call drills.core.runner.run_drill themselves), and the record holds
the resolved knobs, so a test that spells the defaults out gets the same record as one that
leaves them out. Before this, 1,116 runs of the drill tests were 797 distinct ones: a third of
their training time was spent on runs already made. Each call gets its own copy, so a test may
change what it is given. A test that patches the training code calls the real run_drill: its
record must not stand in for the unpatched run.
"""

import copy
from collections.abc import Mapping
from typing import Any

from drills.core.knobs import resolve_knobs
from drills.core.registry import get_drill
from drills.core.runner import run_drill as run_for_real

_records: dict[tuple[str, str, int], dict[str, Any]] = {}


def run_drill(slug: str, knobs: Mapping[str, object], seed: int) -> dict[str, Any]:
    resolved = resolve_knobs(get_drill(slug), knobs)
    key = (slug, repr(sorted(resolved.items())), seed)
    if key not in _records:
        _records[key] = run_for_real(slug, knobs, seed)
    return copy.deepcopy(_records[key])
