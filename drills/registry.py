"""Every drill the app offers, by slug, in catalogue order."""

from __future__ import annotations

from drills.base import Drill
from drills.break_the_graph import BreakTheGraph
from drills.double_shift_labels import DoubleShiftLabels
from drills.loss_spikes import LossSpikes
from drills.loss_vs_metric import LossVsMetric
from drills.lr_sweep import LrSweep
from drills.nan_hunt import NanHunt
from drills.optimizer_membership import OptimizerMembership
from drills.overfit_one_batch import OverfitOneBatch
from drills.overfitting_leakage import OverfittingLeakage
from drills.val_below_train import ValBelowTrain

# Catalogue order: the order learners meet the drills in.
_DRILLS: tuple[Drill, ...] = (
    OverfitOneBatch(),
    BreakTheGraph(),
    DoubleShiftLabels(),
    ValBelowTrain(),
    OptimizerMembership(),
    LrSweep(),
    NanHunt(),
    LossSpikes(),
    OverfittingLeakage(),
    LossVsMetric(),
)


class UnknownDrill(KeyError):
    def __init__(self, slug: str) -> None:
        known = ", ".join(drill.slug for drill in _DRILLS)
        super().__init__(f"unknown drill {slug!r} (known: {known})")
        self.slug = slug

    def __str__(self) -> str:
        # KeyError's str() is the repr of its argument; the message reads better unquoted.
        return str(self.args[0])


def all_drills() -> list[Drill]:
    return list(_DRILLS)


def get_drill(slug: str) -> Drill:
    for drill in _DRILLS:
        if drill.slug == slug:
            return drill
    raise UnknownDrill(slug)
