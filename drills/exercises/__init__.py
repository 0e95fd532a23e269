"""Code exercises: a story, a small PyTorch file with a bug (or a function to write), hidden checks.

The learner's file runs in the sandbox (drills/sandbox/) on hidden seeds; the judge decides from
what it measures outside, never from what the code reports about itself.

    contract.py    Exercise, CheckSpec, CheckResult, Judgement (torch-free)
    registry.py    every exercise, found in drills/catalog/<drill>/exercises/<name>/ (torch-free)
    transport.py   the sandbox's shape and the frames, read as hostile input (torch-free)
    judge.py       judge() and decide(): stage 2, outside the sandbox
    inside.py      main(request, channel): stage 1, inside the sandbox
    running.py     what a harness works with inside;  evidence.py  what the checks measure with
    tensors.py     weights across the wall, as safetensors;  cli.py  `python -m drills exercise`

Each exercise folder holds `__init__.py` (its EXERCISE, torch-free), `story.md`, `starter.py`,
`solution.py`, `problem.py` (the hidden problem, rebuilt from a seed: trusted code both sides
share), `harness.py` (runs inside, with the learner's code) and `checks.py` (runs outside).
"""

from drills.exercises.contract import CheckResult, CheckSpec, Exercise, Judgement
from drills.exercises.registry import UnknownExercise, all_exercises, get_exercise

__all__ = [
    "CheckResult",
    "CheckSpec",
    "Exercise",
    "Judgement",
    "UnknownExercise",
    "all_exercises",
    "get_exercise",
]
