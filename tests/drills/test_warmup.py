import pytest
import torch

from drills.kit import warmup


def test_warm_up_runs_one_step_on_one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # Start from a cold, multi-threaded process, whatever earlier tests left behind: otherwise
    # a full run (where something already set one thread) could not see warm_up fail to.
    before = torch.get_num_threads()
    monkeypatch.setattr(warmup, "warmed_at", None)
    torch.set_num_threads(2)
    try:
        warmup.warm_up()
        assert torch.get_num_threads() == 1
        assert warmup.warmed_at is not None
    finally:
        torch.set_num_threads(before)
