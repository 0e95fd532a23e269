"""The Run a drill's training code is handed: the bookkeeping every drill used to repeat.

It owns the seeded generators (data and batch order depend on the seed only, so every knob
setting of a drill sees the same data), the metric log (each point goes live to the learner and
is kept for the signature), tail summaries of a series, the per-parameter audit, the stop at the
first non-finite value, and the outcome handed back to the runner. The training loop stays about
the model:

    def train(knobs, seed, report):
        run = Run(seed, report)
        data = make_data(run.data_rng)
        model, optimizer = ...
        run.watch(model, optimizer)
        for step in range(steps):
            loss = ...
            if run.stop_if_nonfinite(step, loss.item()):
                break
            loss.backward()
            run.after_backward()
            optimizer.step()
            run.log("loss", step, loss.item())
        return run.outcome(MySignature(final_loss=run.tail_mean("loss"), ...), inputs=...)
"""

from __future__ import annotations

import math
from typing import Any

import torch
from torch import nn

from drills.core.contract import DrillOutcome, Reporter, Signature
from drills.core.curves import tail_mean, tail_std
from drills.kit.audit import ParameterAudit


class Run:
    def __init__(self, seed: int, report: Reporter) -> None:
        self.seed = seed
        self._report = report
        # Private generators: the data and the batch order depend on the seed only, never on
        # how much of torch's global RNG a knob setting used (dropout, noise, init draw from it).
        self.data_rng = torch.Generator().manual_seed(seed)
        self.order_rng = torch.Generator().manual_seed(seed + 1)
        self.series: dict[str, list[float]] = {}
        self.nonfinite_step: int | None = None
        self._audit: ParameterAudit | None = None

    # -- the metric log ----------------------------------------------------------------------
    def log(self, name: str, step: int, value: float) -> None:
        """One point of a metric: streamed to the learner and kept for the signature."""
        value = float(value)
        self._report.metric(name, step, value)
        self.series.setdefault(name, []).append(value)

    def values(self, name: str) -> list[float]:
        return self.series.get(name, [])

    def first(self, name: str) -> float | None:
        values = self.values(name)
        return values[0] if values else None

    def last(self, name: str) -> float | None:
        values = self.values(name)
        return values[-1] if values else None

    def tail_mean(self, name: str) -> float | None:
        """Mean of the series' last 10%: where it settled (one lucky step does not count)."""
        return tail_mean(self.values(name))

    def tail_std(self, name: str) -> float | None:
        return tail_std(self.values(name))

    # -- the non-finite stop ------------------------------------------------------------------
    def stop_if_nonfinite(self, step: int, *values: float) -> bool:
        """True (and the step remembered) when any value is NaN or infinite: the loop should
        stop rather than plot it."""
        if all(math.isfinite(value) for value in values):
            return False
        if self.nonfinite_step is None:
            self.nonfinite_step = step
        return True

    # -- the parameter audit ------------------------------------------------------------------
    def watch(self, model: nn.Module, optimizer: torch.optim.Optimizer) -> ParameterAudit:
        """Start the per-parameter audit (snapshots the initial weights): call before training."""
        self._audit = ParameterAudit(model, optimizer)
        return self._audit

    def after_backward(self) -> None:
        """Record each parameter's gradient state; call after every `loss.backward()`."""
        if self._audit is not None:
            self._audit.after_backward()

    def parameter_rows(self) -> list[dict[str, Any]]:
        return self._audit.rows() if self._audit is not None else []

    # -- the outcome ----------------------------------------------------------------------------
    def outcome(
        self,
        signature: Signature,
        *,
        inputs: dict[str, Any],
        error: str | None = None,
        **diagnostics: Any,
    ) -> DrillOutcome:
        """What the runner stores: the typed signature, the audit rows as the "parameters"
        diagnostic beside any others, the inputs, and an expected error if the run hit one."""
        return DrillOutcome(
            signature.as_dict(),
            {"parameters": self.parameter_rows(), **diagnostics},
            inputs,
            error=error,
        )
