import torch

from drills.kit.warmup import warm_up


def test_warm_up_runs_one_step_on_one_thread() -> None:
    warm_up()
    assert torch.get_num_threads() == 1
