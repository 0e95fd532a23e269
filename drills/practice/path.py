"""The study path: the track's four-hour plan as steps through Drillbook, each ticked off by
evidence the learner produced (a prediction a run bore out, a case solved, a review recalled, a
curve round read rightly), never by a click.

The plan's hours, in our words: rebuild the mechanism of a training step; practise the
debugging mechanics on broken loops; the mechanics particular to language models; and saying a
diagnosis of a curve out loud (the five-part diagnosis every case asks for).

Doing comes before recalling: a recall step comes after a drill (or a round) that shows its
answer, so a new learner's first step is a run, not a question on something never taught.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class StepKind(StrEnum):
    drill = "drill"  # done: a run of the drill bore out the learner's prediction
    case = "case"  # done: a case solved (its cause named)
    review = "review"  # done: the review item recalled (rated good or easy)
    # done: this many curve rounds answered with a leading hypothesis the run bore out
    rounds = "rounds"
    # done: the exercise's code passed in a run made before its solution was shown
    exercise = "exercise"


@dataclass(frozen=True)
class Step:
    kind: StepKind
    # a drill slug, an exercise slug, a case key, a track review item's key, or a number of rounds
    target: str

    @property
    def key(self) -> str:
        return f"{self.kind.value}:{self.target}"


@dataclass(frozen=True)
class Stage:
    key: str
    title: str
    goal: str  # what the hour is for, one sentence
    steps: tuple[Step, ...]


def _drill(slug: str) -> Step:
    return Step(StepKind.drill, slug)


def _case(key: str) -> Step:
    return Step(StepKind.case, key)


def _review(key: str) -> Step:
    return Step(StepKind.review, key)


def _exercise(slug: str) -> Step:
    return Step(StepKind.exercise, slug)


def _rounds(count: int) -> Step:
    return Step(StepKind.rounds, str(count))


PATH: tuple[Stage, ...] = (
    Stage(
        key="mechanism",
        title="Hour 1 · Rebuild the mechanism",
        goal="Know what one training step does well enough to say where each failure enters.",
        steps=(
            _drill("overfit-one-batch"),
            _exercise("overfit-ladder"),  # the drill's lesson, written as code
            _review("diagnostic-stack"),
            _review("softmax-gradient"),
            _review("learning-rate-both-ends"),
        ),
    ),
    Stage(
        key="mechanics",
        title="Hour 2 · Debugging mechanics",
        goal="Plant a detached graph, a frozen optimizer and a silent loop, and tell each apart "
        "from its evidence.",
        steps=(
            _review("fastest-wiring-check"),
            _drill("break-the-graph"),
            _exercise("graph-detached-features"),
            _review("none-versus-zero-gradient"),  # the detached graph shows it
            _drill("optimizer-membership"),
            _drill("silent-no-learning"),
            _case("a-fresh-head"),
            _case("a-split-classifier"),
        ),
    ),
    Stage(
        key="language-models",
        title="Hour 3 · Language-model mechanics",
        goal="Shifting, masks and which tokens count: read a loss floor for what it says.",
        steps=(
            _drill("double-shift-labels"),
            _exercise("labels-shift-once"),
            _review("three-masks"),
            _review("double-shift"),
            _review("prompt-dominated-loss"),
            _case("a-borrowed-data-loader"),
        ),
    ),
    Stage(
        key="curves",
        title="Hour 4 · Diagnose a curve out loud",
        goal="For each curve: the leading hypothesis, its alternatives, the first test that "
        "tells them apart, the likely fix and the evidence that it worked.",
        steps=(
            _rounds(1),  # a round asks for the five parts before they are recalled
            _review("five-part-diagnosis"),
            _case("a-wide-mlp-on-noisy-labels"),
            _case("a-sweep-before-a-long-run"),
            _case("nan-some-way-in"),
            _case("a-loss-that-jumps"),
            _rounds(5),
        ),
    ),
)


def all_steps() -> tuple[Step, ...]:
    return tuple(step for stage in PATH for step in stage.steps)
