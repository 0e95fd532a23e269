"""One set of CPU kernels for every run, on every machine.

torch picks its CPU kernels by the vector instructions the machine has (DEFAULT, AVX2, AVX-512),
and their results differ in the last bits. Most runs shrug that off, but a run near the edge of
stability amplifies it: silent-no-learning's rate-too-large cause (seed 0) ends at a loss of
1.35 with the DEFAULT kernels and 1.99 with AVX2 or AVX-512. The stored case tables, the
exercises' judgements and a replayed command are all compared with runs made elsewhere, so
every run uses the kernels every x86-64 machine has: DEFAULT. The cost, measured on an AVX-512
machine: the case runs of double-shift-labels take 25% longer, optimizer-membership's 60%.

torch reads the variable at its first kernel, not at import, so setting it when `drills` is
imported comes in time for every run (the worker's warm-up imports drills first); the sandbox
sets it in the environment it builds (drills/sandbox/policy.py)."""

from __future__ import annotations

import os

VARIABLE = "ATEN_CPU_CAPABILITY"
CAPABILITY = "default"


def pin() -> None:
    os.environ[VARIABLE] = CAPABILITY
