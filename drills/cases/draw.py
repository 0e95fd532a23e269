"""A case's draw: the hidden cause, the seed and the nuisance settings of one learner's attempt.

Deterministic in (case, learner, attempt number, key), so a draw can be rebuilt and checked, yet
two learners (or one learner's second attempt) may meet different causes, see different curves
and cannot copy numbers or answers. The key is a server secret: without it, a learner with this
package could work out their own seed and nuisance settings, run every candidate cause and see
which one reproduces their curve bit for bit."""

from __future__ import annotations

import hashlib
import hmac
import random
from dataclasses import dataclass
from typing import Any

from drills.cases.contract import Case, Change, Experiment, Fix
from drills.core.knobs import resolve_knobs

# Seeds stay well inside every drill's range and read easily in a replay command.
SEED_RANGE = 2**31


@dataclass(frozen=True)
class Draw:
    cause: str  # one of the case's causes
    seed: int
    knobs: dict[str, Any]  # resolved: every knob of the drill, the cause planted

    def as_dict(self) -> dict[str, Any]:
        return {"cause": self.cause, "seed": self.seed, "knobs": self.knobs}


def draw(case: Case, learner_id: int, number: int, *, key: bytes = b"") -> Draw:
    message = f"case\x00{case.key}\x00{learner_id}\x00{number}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    seed = rng.randrange(SEED_RANGE)
    case_set = case.case_set
    # Sorted: the same draw whatever order the nuisance mapping was written in.
    nuisance = {name: rng.choice(case_set.nuisance[name]) for name in sorted(case_set.nuisance)}
    cause = case.cause(rng.choice(case.causes))
    knobs = {**case_set.base, **nuisance, **case.knobs, **cause.knobs}
    return Draw(cause.key, seed, resolve_knobs(case_set.drill_object, knobs))


def knobs_for(case: Case, base: Draw, change: Change) -> dict[str, Any]:
    """The knobs of a run on the hidden setup with `change` applied, validated by the drill.
    The base is resolved first: a draw read back from the database holds JSON lists where the
    drill's knobs (and a change's `replace`) hold tuples."""
    drill = case.case_set.drill_object
    return resolve_knobs(drill, change.apply(resolve_knobs(drill, base.knobs)))


def experiment_knobs(case: Case, base: Draw, experiment: Experiment) -> dict[str, Any]:
    return knobs_for(case, base, experiment.change)


def fix_knobs(case: Case, base: Draw, fix: Fix) -> dict[str, Any]:
    return knobs_for(case, base, fix.change)
