"""One set of CPU code paths for every run, on every machine.

torch picks its own CPU kernels by the vector instructions the machine has (DEFAULT, AVX2,
AVX-512), and MKL, which does torch's matrix products, picks its code path by the CPU too. Their
results differ in the last bits. Most runs shrug that off, but a run near the edge of stability
amplifies it. silent-no-learning's rate-too-large cause, final loss at seeds 0, 2 and 4:

- Intel AVX-512, torch's AVX-512 kernels: 1.99 at seed 0;
- Intel AVX-512, DEFAULT kernels, MKL's own path: 1.35045, 1.4837, 1.1725;
- AMD EPYC (AVX-512), DEFAULT kernels, MKL's own path: 1.36045, 1.39592, 1.4361;
- AMD EPYC, DEFAULT kernels, MKL_CBWR=COMPATIBLE: 1.35045, 1.39275, 1.4361.

The stored case tables, the exercises' judgements and a replayed command are all compared with
runs made elsewhere, so every run uses the code paths every x86-64 machine has: torch's DEFAULT
kernels, and MKL's conditional-numerical-reproducibility mode COMPATIBLE, which MKL documents as
giving the same results on Intel and compatible CPUs for a fixed number of threads (every run
uses one). The cost: on an Intel AVX-512 machine the DEFAULT kernels made the case runs of
double-shift-labels take 25% longer and optimizer-membership's 60%; on an AMD EPYC, MKL's
COMPATIBLE path took optimizer-membership's from 23.0 and 25.6 s to 34.5 and 29.8 s (two runs
each of `drills.cases.symptoms.build` over seeds 0 and 1).

A third library picks its code path by the CPU as well: oneDNN, which torch calls for some
operations even with the DEFAULT kernels (GELU's is one, in the causal LM of double-shift-labels
and its exercises). Measured on an AMD EPYC with AVX2: a GELU over a (8, 32, 64) tensor gives
other bits with oneDNN capped at SSE4.1 than uncapped, and so does a whole run
(`double-shift-labels --set attention=unmasked --set steps=200 --seed 0`: final loss
0.0049697376 uncapped, 0.0049697626 capped; its symptom table, built on another machine,
held 0.0049697893). So oneDNN is capped at SSE4.1, the lowest level it names on x86-64, which
every machine of this kind has. The cost: none measured (that run took 7.4-7.5 s either way).

All three are read when first used, not at import (torch at its first kernel, MKL at its first
call, oneDNN at its first primitive), so setting them when `drills` is imported comes in time
for every run (the worker's warm-up imports drills first); the sandbox sets them in the
environment it builds (drills/sandbox/policy.py)."""

from __future__ import annotations

import os

# Variable -> value, whatever the environment asked for.
PINNED = {
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
}


def pin() -> None:
    os.environ.update(PINNED)
