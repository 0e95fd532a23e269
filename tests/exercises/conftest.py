"""The test process holds torch at one thread and has taken one optimizer step before any test
forks a child from it (the sandbox double): the child then starts warm, as a warm sandbox does."""

import torch

import drills  # noqa: F401  (silences torch's NumPy notice before torch is used)

torch.set_num_threads(1)
_parameter = torch.nn.Parameter(torch.zeros(1))
_optimizer = torch.optim.Adam([_parameter])
_parameter.sum().backward()  # type: ignore[no-untyped-call]
_optimizer.step()
