import json
import os
import pickle
import subprocess
import sys
from typing import Any

import pytest
import torch

from drills.catalog.overfit_one_batch import OverfitOneBatch
from drills.core.contract import DrillOutcome, Reporter
from drills.core.knobs import KnobError
from drills.core.recorder import MetricPoint
from drills.core.registry import UnknownDrill, get_drill
from drills.core.runner import run_drill

SLUG = "overfit-one-batch"


def test_the_record_is_complete_and_strict_json() -> None:
    record = run_drill(SLUG, {"steps": "30"}, 5)
    assert record["drill"] == SLUG
    assert record["drill_version"] == get_drill(SLUG).version
    assert record["knobs"] == {"bug": "none", "examples": 8, "lr": 0.01, "steps": 30}
    assert record["seed"] == 5
    assert record["command"].endswith("--set steps=30 --seed 5")
    assert record["status"] == "ok" and record["error"] is None
    assert len(record["metrics"]["loss"]) == 30
    assert record["environment"]["threads"] == 1
    assert record["environment"]["deterministic"] is True
    assert record["environment"]["torch"] == torch.__version__
    assert record["environment"]["cpu_capability"] == "DEFAULT"  # drills/core/cpu_kernels.py
    assert len(record["digest"]) == 64
    assert record["timings"]["compute_s"] > 0
    json.dumps(record, allow_nan=False)


def test_a_record_unpickles_without_importing_torch() -> None:
    """A replay's record is pickled to the web process: a torch object anywhere in it (the
    version string was one) imports torch there, holding the event loop for a second or more."""
    record = run_drill(SLUG, {"steps": "30"}, 5)
    script = (
        "import pickle, sys; pickle.loads(sys.stdin.buffer.read()); print('torch' in sys.modules)"
    )
    loaded = subprocess.run(
        [sys.executable, "-c", script],
        input=pickle.dumps(record),
        capture_output=True,
        check=True,
    )
    assert loaded.stdout.strip() == b"False"


def test_a_run_uses_the_default_kernels_whatever_the_environment_asks() -> None:
    """Set before torch's first kernel, so an AVX machine computes as any other would."""
    script = (
        "import drills, torch; torch.ones(2) + 1; print(torch.backends.cpu.get_cpu_capability())"
    )
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "avx2"}
    found = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    assert found.stdout.strip() == "DEFAULT"


def test_a_run_uses_mkl_compatible_path_whatever_the_environment_asks() -> None:
    """MKL's reproducible mode, set before its first call: the path MKL documents as giving the
    same results on Intel and compatible CPUs (drills/core/cpu_kernels.py)."""
    script = "import drills, torch; torch.set_num_threads(1); torch.ones(8, 8) @ torch.ones(8, 8)"
    env = {**os.environ, "MKL_CBWR": "AUTO", "MKL_VERBOSE": "1"}
    found = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True
    )
    calls = [line for line in found.stdout.splitlines() if "SGEMM" in line]
    assert calls and all("CNR:COMPATIBLE" in line for line in calls), found.stdout


GELU_BITS = (
    "import sys, hashlib, torch\n"
    "if sys.argv[1] == 'drills': import drills\n"
    "torch.manual_seed(0); torch.set_num_threads(1)\n"
    "out = torch.nn.functional.gelu(torch.randn(8, 32, 64))\n"
    "print(hashlib.sha256(repr(out.flatten().tolist()).encode()).hexdigest())\n"
)


def gelu_bits(importing: str, isa: str) -> str:
    env = {**os.environ, "ONEDNN_MAX_CPU_ISA": isa}
    found = subprocess.run(
        [sys.executable, "-c", GELU_BITS, importing],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    return found.stdout.strip()


def test_a_run_caps_onednn_whatever_the_environment_asks() -> None:
    """oneDNN, which torch calls for GELU even with the DEFAULT kernels, picks its code by the
    CPU: capped at SSE4.1 when drills is imported, a machine with AVX2 or AVX-512 computes as
    any other would (drills/core/cpu_kernels.py)."""
    if gelu_bits("torch", "SSE41") == gelu_bits("torch", "AVX2"):
        pytest.skip("this CPU gives oneDNN nothing above SSE4.1 to pick: nothing to cap")
    assert gelu_bits("drills", "AVX2") == gelu_bits("drills", "SSE41")


def test_same_inputs_give_the_same_digest() -> None:
    first = run_drill(SLUG, {"bug": "randomness-on", "steps": 40}, 3)
    again = run_drill(SLUG, {"bug": "randomness-on", "steps": 40}, 3)
    other = run_drill(SLUG, {"bug": "randomness-on", "steps": 40}, 4)
    assert first["digest"] == again["digest"]
    assert first["digest"] != other["digest"]


def test_emit_receives_batches_that_add_up_to_the_metrics() -> None:
    batches: list[list[MetricPoint]] = []
    record = run_drill(SLUG, {"steps": 300}, 0, emit=batches.append, flush_interval_s=0.01)
    assert len(batches) > 1
    streamed: dict[str, list[list[float]]] = {}
    for batch in batches:
        for name, step, value in batch:
            streamed.setdefault(name, []).append([step, value])
    assert streamed == record["metrics"]


@pytest.mark.parametrize(
    ("slug", "knobs", "seed", "error"),
    [
        ("nope", {}, 0, UnknownDrill),
        (SLUG, {"lr": "fast"}, 0, KnobError),
        (SLUG, {}, -1, ValueError),
        (SLUG, {}, 1.5, ValueError),
        (SLUG, {}, True, ValueError),
    ],
)
def test_bad_requests_raise_before_anything_runs(
    slug: str, knobs: dict[str, object], seed: Any, error: type[Exception]
) -> None:
    emitted: list[list[MetricPoint]] = []
    with pytest.raises(error):
        run_drill(slug, knobs, seed, emit=emitted.append)
    assert emitted == []


def test_unknown_drill_message_lists_the_known_ones() -> None:
    with pytest.raises(UnknownDrill, match="unknown drill 'nope' \\(known: overfit-one-batch, "):
        run_drill("nope", {}, 0)


def test_an_unexpected_exception_becomes_an_error_record(monkeypatch: pytest.MonkeyPatch) -> None:
    def broken(self: OverfitOneBatch, knobs: dict[str, Any], seed: int, report: Reporter) -> Any:
        report.metric("loss", 0, 1.0)
        raise RuntimeError("shape mismatch somewhere")

    monkeypatch.setattr(OverfitOneBatch, "run", broken)
    record = run_drill(SLUG, {}, 0)
    assert record["status"] == "error"
    assert record["error"] == "RuntimeError: shape mismatch somewhere"
    assert record["metrics"] == {"loss": [[0, 1.0]]}
    assert record["observed"] is None


def test_a_nonfinite_metric_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def nan_curve(self: OverfitOneBatch, knobs: dict[str, Any], seed: int, report: Reporter) -> Any:
        report.metric("loss", 0, float("nan"))
        return DrillOutcome({}, {"parameters": []}, {})

    monkeypatch.setattr(OverfitOneBatch, "run", nan_curve)
    record = run_drill(SLUG, {}, 0)
    assert record["status"] == "error"
    assert "metric 'loss' at step 0 is nan" in record["error"]


def test_nonfinite_numbers_in_a_signature_stay_json_safe(monkeypatch: pytest.MonkeyPatch) -> None:
    def odd(self: OverfitOneBatch, knobs: dict[str, Any], seed: int, report: Reporter) -> Any:
        signature = {"final_loss": float("inf"), "eval_loss": float("nan")}
        return DrillOutcome(signature, {"parameters": []}, {})  # type: ignore[arg-type]

    monkeypatch.setattr(OverfitOneBatch, "run", odd)
    record = run_drill(SLUG, {}, 0)
    assert record["signature"]["final_loss"] == "inf"
    json.dumps(record, allow_nan=False)
