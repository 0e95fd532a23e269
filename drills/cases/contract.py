"""What a case is: a symptom with a hidden cause, the causes a learner weighs, the experiments
that can tell them apart, and the fixes on offer (right and plausibly wrong).

A case stands on one drill: a symptom with a few look-alike causes (`Case.causes`), one of which
each attempt draws (drills/cases/draw.py). The drill's knobs plant the cause (`Cause.knobs`);
the case set around it lists every cause, the experiments a learner may spend budget on, and the
fixes they may try, each cause naming the one that heals it (`Cause.fix`). Nothing here imports
torch: the web process describes cases without paying for it."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from drills.cases.parameter_table import table_reading
from drills.core.contract import Drill
from drills.core.registry import get_drill

# The packet's seven root-cause families, plus the case where nothing is broken (or only the
# metric misleads): "there is always a bug" must not be a safe guess.
FAMILIES: dict[str, str] = {
    "data": "Data or targets wrong",
    "forward": "Forward pass wrong",
    "loss": "Loss or masking wrong",
    "graph": "Loss disconnected from the graph",
    "gradients": "Gradients absent, zero or non-finite",
    "optimizer": "Optimizer not updating the intended parameters",
    "evaluation": "Evaluation or logging misleading",
    "healthy": "Nothing is broken",
}

# What an experiment lets the learner see of its run, besides its curves:
# "numbers": the experiment's observations (signature fields, by label);
# "parameters": the per-parameter health table (gradient, update, norms);
# "inputs": shapes and a few decoded input/label pairs;
# "tables": the drill's own evidence tables (e.g. a confusion matrix, the graph's leaves).
View = Literal["numbers", "parameters", "inputs", "tables"]


@dataclass(frozen=True)
class Change:
    """A change to a run's knobs. `replace` swaps one value of a knob for another and leaves any
    other value alone: a fix that removes one specific bug leaves a different bug in place."""

    set: Mapping[str, Any] = field(default_factory=dict)
    scale: Mapping[str, float] = field(default_factory=dict)
    replace: Mapping[str, Mapping[Any, Any]] = field(default_factory=dict)

    def apply(self, knobs: Mapping[str, Any]) -> dict[str, Any]:
        changed = dict(knobs)
        for name, mapping in self.replace.items():
            if changed.get(name) in mapping:
                changed[name] = mapping[changed[name]]
        for name, factor in self.scale.items():
            changed[name] = changed[name] * factor
        changed.update(self.set)
        return changed


NO_CHANGE = Change()


@dataclass(frozen=True)
class Cause:
    """One candidate explanation of a case's symptom, and the knob values that plant it."""

    key: str  # stable, never shown to a learner before the verdict
    family: str  # a key of FAMILIES
    text: str  # the cause in a learner's words: "The labels no longer belong to their inputs."
    knobs: Mapping[str, Any]
    # What the drill's own diagnose() reads from a run with this cause planted (whatever the
    # draw): the tests hold every case to it.
    verdict: str
    fix: str  # the key of the fix that heals it (a healthy cause: "change-nothing")
    # The slug of the drill's fix-the-loop exercise whose starter carries this cause's bug, when
    # one does: the learner may then answer the case with code (a healthy cause has none).
    exercise: str | None = None


@dataclass(frozen=True)
class Experiment:
    """A real run on the hidden setup (changed by `change`) that shows some evidence."""

    key: str
    title: str  # "Overfit a single example"
    question: str  # what it asks of the model, in a sentence
    change: Change = NO_CHANGE
    shows: tuple[View, ...] = ()
    observations: tuple[str, ...] = ()  # signature keys shown as numbers
    # What the run showed, as a short key, read from its signature (default: the drill's own
    # diagnose()). Scoring compares these readings across causes: an experiment separates two
    # causes when their readings differ (see drills/cases/outcomes.py).
    reading: Callable[[Mapping[str, Any], str | None], str] | None = None


@dataclass(frozen=True)
class Fix:
    key: str
    text: str  # the intervention in words: "Build the optimizer after replacing the head."
    change: Change


@dataclass(frozen=True)
class ShownChart:
    """A chart of the case page: neutral title and trace names, so that no metric name tells the
    cause (a drill may name a series after what it checks)."""

    title: str
    y_label: str
    # metric name (or prefix ending in "*") -> label shown to the learner
    series: Mapping[str, str]
    log_y: bool = False
    x_label: str = "step"  # as the drill's Chart


@dataclass(frozen=True)
class CaseSet:
    """The cases that stand on one drill share their causes, experiments and fixes."""

    drill: str  # the drill's slug
    causes: tuple[Cause, ...]
    experiments: tuple[Experiment, ...]
    fixes: tuple[Fix, ...]
    charts: tuple[ShownChart, ...]
    # Knob values every case of the set starts from, before the draw and the cause.
    base: Mapping[str, Any] = field(default_factory=dict)
    # Settings that vary per draw and do not change the verdict: each a tuple of values to pick
    # from (a learning rate within the healthy range, a data size, ...).
    nuisance: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    # Observations shown under the symptom run (signature keys); keep to those no cause names.
    symptom_observations: tuple[str, ...] = ()

    @property
    def drill_object(self) -> Drill:
        return get_drill(self.drill)

    def __post_init__(self) -> None:
        fixes = {fix.key for fix in self.fixes}
        for cause in self.causes:
            if cause.fix not in fixes:
                raise ValueError(f"cause {cause.key!r} of {self.drill!r} names no fix of the set")

    def cause(self, key: str) -> Cause:
        for cause in self.causes:
            if cause.key == key:
                return cause
        raise KeyError(f"case set {self.drill!r} has no cause {key!r}")

    def experiment(self, key: str) -> Experiment:
        for experiment in self.experiments:
            if experiment.key == key:
                return experiment
        raise KeyError(f"case set {self.drill!r} has no experiment {key!r}")

    def fix(self, key: str) -> Fix:
        for fix in self.fixes:
            if fix.key == key:
                return fix
        raise KeyError(f"case set {self.drill!r} has no fix {key!r}")

    def read(self, experiment: Experiment, record: Mapping[str, Any]) -> str:
        """What the experiment's run showed, as a short key (see Experiment.reading); a health
        table with no reading of its own is read from what it shows (parameter_table.py)."""
        signature, error = record.get("signature") or {}, record.get("error")
        if experiment.reading is not None:
            return experiment.reading(signature, error)
        if "parameters" in experiment.shows:
            return table_reading((record.get("diagnostics") or {}).get("parameters") or [])
        return self.drill_object.diagnose(signature, error)

    def healed(self, signature: Mapping[str, Any], error: str | None) -> bool:
        """Whether a run shows the drill's healthy signature: the drill decides, not the knobs."""
        drill = self.drill_object
        return error is None and drill.diagnose(signature, error) == drill.healthy


@dataclass(frozen=True)
class Case:
    """A symptom, told as a story, with the causes it may hide: each attempt draws one of them,
    so a retry or a classmate's answer gives nothing away, and the story fits every one."""

    key: str  # stable, e.g. "frozen-head"; must not name a cause
    title: str  # what the learner sees in the list, symptom-first: "The head that never learns"
    story: str  # two or three sentences in the product's words; true of every cause listed
    case_set: CaseSet
    # The look-alike causes (keys of the case set) a draw picks from: at least two, and the
    # symptom run alone must not tell them apart (drills/cases/symptoms.py).
    causes: tuple[str, ...]
    # Extra knob values for this case only (e.g. a longer run), applied before the cause.
    knobs: Mapping[str, Any] = field(default_factory=dict)
    # Causes an earlier version of the case hid and no draw picks any more: an attempt stored
    # with one still opens, scores and reveals (drills/cases/hidden_ever.json lists them all).
    retired: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(set(self.causes)) < 2 or len(set(self.causes)) != len(self.causes):
            raise ValueError(f"case {self.key!r} needs two or more distinct causes")
        if set(self.retired) & set(self.causes):
            raise ValueError(f"case {self.key!r} both hides and retires a cause")
        for key in (*self.causes, *self.retired):
            self.case_set.cause(key)  # raises for a cause the set does not have

    def cause(self, key: str) -> Cause:
        """One of the causes the case hides or once hid, by key (KeyError for any other: a
        stored attempt's cause must be one its case may hide, or a retired one)."""
        if key not in self.causes and key not in self.retired:
            raise KeyError(f"case {self.key!r} does not hide {key!r}")
        return self.case_set.cause(key)

    def fix_of(self, cause: str) -> str:
        """The key of the fix that heals `cause`."""
        return self.cause(cause).fix

    def exercises(self) -> tuple[str, ...]:
        """The exercises any of the case's causes names, in cause order, each once: what the
        case page offers as a code verdict, the same whichever cause a draw planted."""
        named = (self.case_set.cause(key).exercise for key in self.causes)
        return tuple(dict.fromkeys(slug for slug in named if slug is not None))

    def families(self) -> set[str]:
        return {self.case_set.cause(key).family for key in self.causes}
