"""The drill contract: knob schema, hypotheses, charts, the reporter and the run outcome."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, fields
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


@dataclass(frozen=True)
class Observation:
    key: str  # a signature key
    label: str
    reference: str | None = None  # signature key holding the theoretical expectation
    # The hypotheses the reference belongs to (empty: it applies to every run). A clean run is
    # not compared with the floor shuffled labels would give: the page shows such a reference
    # only when the run's verdict or the learner's prediction is one of these.
    reference_for: tuple[str, ...] = ()


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
