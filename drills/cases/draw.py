"""A case's draw: the seed and nuisance settings of one learner's attempt at it.

Deterministic in (case, learner, attempt number), so a draw can be rebuilt and checked, yet two
learners (or one learner's second attempt) see different curves and cannot copy numbers.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from typing import Any

from drills.cases.contract import Case, Change, Experiment, Fix
from drills.core.knobs import resolve_knobs

# Seeds stay well inside every drill's range and read easily in a replay command.
SEED_RANGE = 2**31


@dataclass(frozen=True)
class Draw:
    seed: int
    knobs: dict[str, Any]  # resolved: every knob of the drill, the cause planted

    def as_dict(self) -> dict[str, Any]:
        return {"seed": self.seed, "knobs": self.knobs}


def draw(case: Case, learner_id: int, number: int) -> Draw:
    digest = hashlib.sha256(f"{case.key}\x00{learner_id}\x00{number}".encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    seed = rng.randrange(SEED_RANGE)
    case_set = case.case_set
    # Sorted: the same draw whatever order the nuisance mapping was written in.
    nuisance = {name: rng.choice(case_set.nuisance[name]) for name in sorted(case_set.nuisance)}
    knobs = {**case_set.base, **nuisance, **case.knobs, **case.hidden_cause.knobs}
    return Draw(seed, resolve_knobs(case_set.drill_object, knobs))


def knobs_for(case: Case, base: Draw, change: Change) -> dict[str, Any]:
    """The knobs of a run on the hidden setup with `change` applied, validated by the drill."""
    return resolve_knobs(case.case_set.drill_object, change.apply(base.knobs))


def experiment_knobs(case: Case, base: Draw, experiment: Experiment) -> dict[str, Any]:
    return knobs_for(case, base, experiment.change)


def fix_knobs(case: Case, base: Draw, fix: Fix) -> dict[str, Any]:
    return knobs_for(case, base, fix.change)
