"""torch inside the sandbox, through one warm pool for the module (each warm sandbox costs one
`import torch`, ~4-5 s of CPU, so the module takes few of them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from drills.sandbox import Limits, WarmPool
from tests.sandbox.support import needs_sandbox, only_frame, safetensors_names, submit

pytestmark = needs_sandbox

TRAIN = """
import sys
torch_was_loaded = "torch" in sys.modules
import safetensors, torch
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(4, 16), torch.nn.Tanh(), torch.nn.Linear(16, 1))
optimizer = torch.optim.Adam(model.parameters(), lr=0.05)
inputs = torch.randn(64, 4)
targets = inputs @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
for step in range(150):
    loss = torch.nn.functional.mse_loss(model(inputs), targets)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    if step % 50 == 0:
        channel.send({"step": step, "loss": loss.item()})
# safetensors.torch.save needs NumPy (not installed): hand the tensors to its serializer.
state = {name: tensor.detach().contiguous() for name, tensor in model.state_dict().items()}
specs = {
    name: safetensors.TensorSpec(
        dtype="float32", shape=list(t.shape), data_ptr=t.data_ptr(), data_len=t.numel() * 4
    )
    for name, t in state.items()
}
channel.send(
    {"final": loss.item(), "torch_was_loaded": torch_was_loaded,
     "threads": torch.get_num_threads()},
    {"weights": bytes(safetensors.serialize(specs))},
)
"""


@pytest.fixture(scope="module")
def pool() -> Iterator[WarmPool]:
    pool = WarmPool(size=1)
    assert pool.wait_ready(), pool.failure
    yield pool
    pool.close()


def test_torch_trains_inside_and_the_weights_come_back(pool: WarmPool) -> None:
    finished = submit(TRAIN, pool=pool)
    assert finished.status == "ok", finished.stderr
    *steps, final = finished.frames
    assert [frame["step"] for frame in steps] == [0, 50, 100]
    assert final["final"] < steps[0]["loss"] / 10
    assert final["threads"] == 1
    assert safetensors_names(finished.blobs["weights"]) == {
        "0.weight",
        "0.bias",
        "2.weight",
        "2.bias",
    }
    # 4*16 + 16 + 16 + 1 floats after the header.
    assert len(finished.blobs["weights"]) > 97 * 4


def test_a_warm_sandbox_has_torch_imported_already_and_a_cold_one_not(pool: WarmPool) -> None:
    code = "import sys\nchannel.send({'torch': 'torch' in sys.modules})\n"
    assert only_frame(submit(code, pool=pool)) == {"torch": True}
    assert only_frame(submit(code)) == {"torch": False}
    # Limits a started sandbox cannot change (its rlimits) bypass the pool: cold, as asked.
    assert only_frame(submit(code, Limits(processes=32), pool=pool)) == {"torch": False}


def test_a_dataloader_with_worker_processes_runs_inside(pool: WarmPool) -> None:
    finished = submit(
        """
        import torch
        from torch.utils.data import DataLoader, TensorDataset
        data = TensorDataset(torch.arange(32.0).unsqueeze(1))
        loader = DataLoader(data, batch_size=8, num_workers=2)
        total = sum(batch[0].sum().item() for batch in loader)
        channel.send({"total": total})
        """,
        pool=pool,
    )
    assert only_frame(finished) == {"total": float(sum(range(32)))}


def test_close_kills_the_waiting_sandboxes() -> None:
    pool = WarmPool(size=1, preload=())
    assert pool.wait_ready()
    waiting = list(pool._ready)
    pool.close()
    assert [sandbox.alive for sandbox in waiting] == [False]
    finished = submit("channel.send({})", pool=pool)  # a closed pool: the run goes cold
    assert finished.status == "ok"
