"""The drill contract: knob schema, hypotheses, charts, the reporter and the run outcome."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from math import isfinite
from typing import Any, Literal, Protocol

SignatureValue = float | int | bool | str | None


@dataclass(frozen=True)
class Knob:
    """One setting a learner may turn before a run."""

    name: str
    # "float-list": a few distinct numbers, e.g. the learning rates of a sweep; written
    # "1e-06,0.0001" on the command line and in forms, a JSON list in the API.
    kind: Literal["int", "float", "choice", "float-list"]
    default: int | float | str | tuple[float, ...]
    help: str
    # Allowed values for "choice"; an "int" knob may also restrict itself to a few values.
    choices: tuple[int | float | str, ...] | None = None
    # Bounds of the value; for a "float-list", bounds of each number in it.
    minimum: float | None = None
    maximum: float | None = None
    log_scale: bool = False  # UI hint only, e.g. for a learning rate


@dataclass(frozen=True)
class Hypothesis:
    key: str  # stable identifier, e.g. "fits" or "labels-detached"
    text: str  # one sentence a learner can pick as their leading hypothesis


@dataclass(frozen=True)
class Reference:
    """A constant line drawn on a chart: a theoretical level the curves are read against (the
    value comes from the run's signature, so it fits the run's own data)."""

    label: str  # what the line is, in words: "next-token entropy"
    signature_key: str


@dataclass(frozen=True)
class Chart:
    key: str
    title: str
    # Metric names plotted as traces on this chart. A name ending in "*" is a prefix: every series
    # whose name starts with it gets a trace, in order of first appearance (multi-run charts,
    # e.g. "loss@*" plots "loss@lr=1e-06", "loss@lr=0.01", ...).
    metrics: tuple[str, ...]
    y_label: str
    log_y: bool = False
    references: tuple[Reference, ...] = ()
    # "lines": one trace per metric. "heatmap": one row per matched series (a layer), steps
    # across, the value as colour (log10 when log_y): for many series that share a scale.
    kind: Literal["lines", "heatmap"] = "lines"
    # What a legend calls each metric, in words: metric name (or prefix ending in "*") -> label.
    # A prefix's label is put before the rest of the series name ("" keeps the rest alone).
    labels: Mapping[str, str] = field(default_factory=dict)
    # What the x axis counts: the step a point was logged at, or the epoch for a loop that logs
    # once per epoch (val-below-train).
    x_label: str = "step"


def series_label(labels: Mapping[str, str], metric: str) -> str | None:
    """The label `labels` gives a metric series, or None when no entry names it. A prefix entry
    ("loss@*": "loss at") labels "loss@lr=0.01" as "loss at lr=0.01"."""
    for name, label in labels.items():
        if name == metric:
            return label
        if name.endswith("*") and metric.startswith(name[:-1]):
            return f"{label} {metric[len(name) - 1 :]}".strip()
    return None


@dataclass(frozen=True)
class Observation:
    key: str  # a signature key
    label: str
    reference: str | None = None  # signature key holding the theoretical expectation
    # The hypotheses the reference belongs to (empty: it applies to every run). A clean run is
    # not compared with the floor shuffled labels would give: the page shows such a reference
    # only when the run's verdict or the learner's prediction is one of these.
    reference_for: tuple[str, ...] = ()


@dataclass(frozen=True)
class NumericPrediction:
    """A number the learner may predict before a run, scored against one field of the run's
    signature: matched when |predicted - observed| is at most the wider of absolute_band and
    relative_band * |observed|. Declared only where the number has a theoretical value a learner
    can work out before running (a floor, the step a known bad batch arrives at)."""

    key: str  # the signature field compared
    label: str  # the question asked: "Where will the training loss settle?"
    unit: str  # "nats", "step"
    help: str  # a hint towards the theory, shown under the field
    # How the page words the observed value: "the run settled at" 0.72.
    reported_as: str
    relative_band: float | None = None  # a share of the observed value, e.g. 0.15
    absolute_band: float | None = None  # in the unit, e.g. 0.1; 0 asks for the exact number

    @property
    def band(self) -> str:
        """The band in words: "±0.1 or ±15%, whichever is wider", "exactly"."""
        parts = []
        if self.absolute_band:
            parts.append(f"±{self.absolute_band:g}")
        if self.relative_band:
            parts.append(f"±{self.relative_band * 100:g}%")
        if not parts:
            return "exactly"
        return " or ".join(parts) + (", whichever is wider" if len(parts) > 1 else "")


def score_numeric(
    prediction: NumericPrediction, predicted: float, observed: float | None
) -> bool | None:
    """Whether `predicted` lies within the prediction's band of `observed`; None when the run
    reported no such number (no value, or one that is not a finite number)."""
    if observed is None or isinstance(observed, bool) or not isinstance(observed, int | float):
        return None
    if not isfinite(observed):
        return None
    tolerance = max(
        prediction.absolute_band or 0.0, (prediction.relative_band or 0.0) * abs(observed)
    )
    return abs(predicted - observed) <= tolerance


def score_numeric_predictions(
    drill: Drill, predicted: Mapping[str, float], signature: Mapping[str, Any]
) -> dict[str, bool | None]:
    """Every numeric prediction the learner made, scored against the run's signature."""
    declared = {item.key: item for item in drill.numeric_predictions}
    return {
        key: score_numeric(declared[key], value, signature.get(key))
        for key, value in predicted.items()
        if key in declared
    }


@dataclass
class Signature:
    """A drill's observed numbers, as a typed record: subclass it with one field per number
    (default None, where a number does not apply to a run), in a torch-free module of the drill's
    folder so that the description can name it. Stored as a plain dict (`as_dict`)."""

    def as_dict(self) -> dict[str, SignatureValue]:
        return {item.name: getattr(self, item.name) for item in fields(self)}

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(item.name for item in fields(cls))


class Reporter(Protocol):
    def metric(self, name: str, step: int, value: float) -> None:
        """Record one point of a metric series. `value` must be finite."""


@dataclass
class DrillOutcome:
    """What a drill hands back after a run (or attaches to a DrillError)."""

    signature: dict[str, SignatureValue]
    diagnostics: dict[str, Any]  # must include "parameters": the health audit rows
    inputs: dict[str, Any]  # shapes, a digest of the batch, a few decoded examples
    error: str | None = None  # a clear, expected problem the run ended with


class DrillError(Exception):
    """An expected failure a drill detects mid-run, e.g. a batch with nothing to supervise.

    The runner turns it into status "error" with this message and keeps whatever partial
    outcome the drill attached, so the learner still sees the evidence that led to it.
    """

    def __init__(self, message: str, *, outcome: DrillOutcome | None = None) -> None:
        super().__init__(message)
        self.outcome = outcome


class Drill(ABC):
    """A drill: a symptom, the knobs to explore it, and a real training job to run."""

    slug: str
    # Place in the catalogue (ascending): the order learners meet the drills in.
    position: int
    title: str
    summary: str  # one line
    symptom: str  # what the learner sees first
    scenario: str  # the setup in two or three sentences
    version: str  # bump when the numbers a run produces change
    knobs: tuple[Knob, ...]
    hypotheses: tuple[Hypothesis, ...]
    charts: tuple[Chart, ...]
    observations: tuple[Observation, ...]
    # The typed record of the numbers a run reports (observations name its fields).
    signature_type: type[Signature] | None = None
    # Numbers the learner may predict beside the hypothesis, each scored within a stated band.
    numeric_predictions: tuple[NumericPrediction, ...] = ()
    # The hypothesis key a healthy run shows (the "fixed" side of a failed/fixed pair of
    # evidence); None when the drill has no single healthy outcome.
    healthy: str | None = None

    def run(self, knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
        """Train with resolved knobs; global torch seeding is already done by the runner.

        A drill's training code is `train(knobs, seed, report)` in the `train` module beside its
        description, imported only here: describing a drill (the web process, `drills list`)
        never pays for importing torch, only a worker that trains does."""
        training = importlib.import_module(f"{type(self).__module__}.train")
        outcome: DrillOutcome = training.train(knobs, seed, report)
        return outcome

    @abstractmethod
    def diagnose(self, signature: Mapping[str, Any], error: str | None) -> str:
        """The hypothesis key the *observed numbers* support.

        Classify from the signature, never from the knob values: the point is to check the
        learner's prediction against what the run actually showed.
        """
