"""Pay torch's one-off start-up costs before a worker takes its first job."""

from __future__ import annotations

import torch


def warm_up() -> None:
    torch.set_num_threads(1)
    model = torch.nn.Linear(4, 2)
    # The first optimizer built in a process lazily imports torch._dynamo (~1.5 s); one real
    # step also touches the autograd and Adam kernels a drill will use.
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    loss = model(torch.ones(3, 4)).pow(2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
