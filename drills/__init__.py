"""Drillbook drills: tiny, real PyTorch training jobs with injectable bugs.

Pure torch + stdlib; nothing here knows about the web app. Describing a drill (its knobs,
hypotheses, charts) imports no torch: only running one does.

    drills/core/      the torch-free contract and pipeline (contract, knobs, registry, runner, ...)
    drills/kit/       torch helpers for drill authors (audit, non-finite finder, models, data)
    drills/catalog/   one package per drill: its description, and train.py for its training code
"""

import warnings
from typing import Any

from drills.core.contract import (
    Chart,
    Drill,
    DrillError,
    DrillOutcome,
    Hypothesis,
    Knob,
    Reference,
    Signature,
)
from drills.core.cpu_kernels import pin as pin_cpu_kernels
from drills.core.registry import UnknownDrill, all_drills, get_drill

# Before any run's first kernel: every machine computes with the same code paths (cpu_kernels.py).
pin_cpu_kernels()

# torch warns at import time when NumPy is missing. Drills never use NumPy, and the warning would
# otherwise land on every CLI run's stderr.
warnings.filterwarnings("ignore", message="Failed to initialize NumPy", category=UserWarning)


def run_drill(slug: str, knobs: Any, seed: int, **options: Any) -> dict[str, Any]:
    """Run a drill and return its evidence record (see drills.core.runner.run_drill). Imports
    torch on first use only."""
    from drills.core.runner import run_drill as run

    return run(slug, knobs, seed, **options)


__all__ = [
    "Chart",
    "Drill",
    "DrillError",
    "DrillOutcome",
    "Hypothesis",
    "Knob",
    "Reference",
    "Signature",
    "UnknownDrill",
    "all_drills",
    "get_drill",
    "run_drill",
]
