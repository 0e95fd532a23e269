"""Pay torch's one-off start-up costs before a worker takes its first job."""

from __future__ import annotations

import time

import torch

# When this process finished warming up (time.time()), or None while it is cold.
warmed_at: float | None = None


def warm_up() -> None:
    global warmed_at
    torch.set_num_threads(1)
    model = torch.nn.Linear(4, 2)
    # The first optimizer built in a process lazily imports torch._dynamo (~1.5 s); one real
    # step also touches the autograd and Adam kernels a drill will use.
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = model(torch.ones(3, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    warmed_at = time.time()
