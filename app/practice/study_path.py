"""Where a learner stands on the study path (drills/practice/path.py): each step is done once
the learner's own evidence shows it, read from what is stored; nothing is ticked by hand."""

from dataclasses import dataclass

from sqlmodel import Session, col, select

from app.cases.models import CaseAttempt, CaseStage
from app.exercises.models import ExerciseRun
from app.practice.models import ReviewLogEntry, ReviewRating
from app.practice.round_models import DiagnosisRound
from app.runs.models import Attempt, drill_page_runs
from drills.cases.registry import get_case
from drills.core.registry import get_drill
from drills.exercises.registry import get_exercise
from drills.practice.items import get_item
from drills.practice.path import PATH, Step, StepKind, all_steps


@dataclass(frozen=True)
class StepStanding:
    step: Step
    title: str  # what to do, in words
    href: str
    done: bool


@dataclass(frozen=True)
class StageStanding:
    title: str
    goal: str
    steps: list[StepStanding]

    @property
    def done(self) -> int:
        return sum(step.done for step in self.steps)


@dataclass(frozen=True)
class PathStanding:
    stages: list[StageStanding]

    @property
    def done(self) -> int:
        return sum(stage.done for stage in self.stages)

    @property
    def total(self) -> int:
        return sum(len(stage.steps) for stage in self.stages)

    @property
    def next_step(self) -> StepStanding | None:
        return next((s for stage in self.stages for s in stage.steps if not s.done), None)


def _evidence(session: Session, learner_id: int) -> set[str]:
    """The step keys the learner's stored work shows done."""
    done: set[str] = set()
    # The drills whose hidden-bug runs showed what the learner predicted: one row per drill, not
    # one per attempt (a learner's attempts run into the hundreds; every catalogue view reads
    # this). A run whose bug the learner picked is exploration: predicting the bug one planted
    # oneself shows no diagnosis.
    for slug in session.exec(
        select(Attempt.drill_slug)
        .distinct()
        .where(
            Attempt.learner_id == learner_id,
            drill_page_runs(),
            col(Attempt.hidden_setup).is_(True),
            col(Attempt.observed_hypothesis) == col(Attempt.hypothesis),
        )
    ):
        done.add(f"{StepKind.drill.value}:{slug}")
    for case_key, score in session.exec(
        select(CaseAttempt.case_key, CaseAttempt.score).where(
            CaseAttempt.learner_id == learner_id, CaseAttempt.stage == CaseStage.revealed
        )
    ):
        if (score or {}).get("cause_named"):
            done.add(f"{StepKind.case.value}:{case_key}")
    # An exercise counts once its code passed in a run made before the solution was shown: a
    # pass of a fix the learner had read shows no skill of theirs.
    for slug in session.exec(
        select(ExerciseRun.exercise_slug)
        .distinct()
        .join(Attempt, col(Attempt.id) == col(ExerciseRun.attempt_id))
        .where(
            Attempt.learner_id == learner_id,
            ExerciseRun.judgement == "passed",
            col(ExerciseRun.solution_shown).is_(False),
        )
    ):
        done.add(f"{StepKind.exercise.value}:{slug}")
    recalled = [ReviewRating.good.value, ReviewRating.easy.value]
    for item_key in session.exec(
        select(ReviewLogEntry.item_key).where(
            ReviewLogEntry.learner_id == learner_id, col(ReviewLogEntry.rating).in_(recalled)
        )
    ):
        if item_key.startswith("track:"):
            done.add(f"{StepKind.review.value}:{item_key.removeprefix('track:')}")
    read_rightly = sum(
        bool((score or {}).get("leading_right"))
        for score in session.exec(
            select(DiagnosisRound.score).where(
                DiagnosisRound.learner_id == learner_id,
                col(DiagnosisRound.answered_at).is_not(None),
            )
        )
    )
    done |= {
        step.key
        for step in all_steps()
        if step.kind is StepKind.rounds and read_rightly >= int(step.target)
    }
    return done


def _described(step: Step) -> tuple[str, str]:
    if step.kind is StepKind.drill:
        return (
            f"Predict a hidden-bug run of “{get_drill(step.target).title}” rightly",
            f"/drills/{step.target}",
        )
    if step.kind is StepKind.case:
        # The case's page is reached through the list, which opens a fresh draw on request.
        return f"Solve the case “{get_case(step.target).title}”", "/cases"
    if step.kind is StepKind.exercise:
        title = get_exercise(step.target).title
        return f"Write the code of “{title}” until it passes, before reading the solution", (
            f"/exercises/{step.target}"
        )
    if step.kind is StepKind.rounds:
        count = int(step.target)
        rounds = "a curve round" if count == 1 else f"{count} curve rounds"
        return f"Read {rounds} rightly (the leading hypothesis the run bears out)", (
            "/practice/rounds"
        )
    return f"Recall: {get_item(step.target).prompt}", f"/practice/track:{step.target}"


def path_standing(session: Session, *, learner_id: int) -> PathStanding:
    done = _evidence(session, learner_id)
    stages = []
    for stage in PATH:
        steps = []
        for step in stage.steps:
            title, href = _described(step)
            steps.append(StepStanding(step, title, href, step.key in done))
        stages.append(StageStanding(stage.title, stage.goal, steps))
    return PathStanding(stages)
