"""Mixed precision. Fix train() so that float16 autocast trains as well as float32 did.

The judge calls train(model, batches, scaler, report) with its own model, batches and gradient
scaler (on hidden seeds, with several first scales). It compares one step of your loop with the
step the same loop takes in float32 from the same weights on the same batch, checks what the
weights do when the scaled gradients overflow float16, and measures the training loss the
weights reach. Train `model` in place; the return value is ignored.

    model    nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1)), float32 weights
    batches  a list of (features (B, 8), targets (B, 1)) float32 pairs: one step each
    scaler   a torch.amp.GradScaler("cpu"), fresh, at the judge's first scale
    report   report(name, step, value) draws a point on your live curve
"""

from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

LR = 0.2  # plain SGD
MAX_NORM = 1.0  # every step's gradient is clipped to this norm, as in float32


def train(
    model: nn.Module,
    batches: list[tuple[torch.Tensor, torch.Tensor]],
    scaler: torch.amp.GradScaler,
    report: Callable[[str, int, float], None],
) -> None:
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for step, (features, targets) in enumerate(batches):
        optimizer.zero_grad()
        with torch.autocast("cpu", dtype=torch.float16):
            prediction = model(features)  # float16 matmuls; the weights stay float32
        loss = F.mse_loss(prediction.float(), targets)
        scaler.scale(loss).backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
        scaler.step(optimizer)  # skipped when a gradient is inf or NaN
        scaler.update()
        report("loss", step, loss.item())
        report("grad_norm", step, float(norm))


if __name__ == "__main__":
    # A local run on data of your own (the judge ignores this block and builds its own).
    torch.manual_seed(0)
    xs = torch.randn(512, 8)
    ys = torch.tanh(xs @ torch.randn(8, 1) / 2)
    net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 1))
    with torch.no_grad():
        print(f"loss before: {F.mse_loss(net(xs), ys).item():.4f}")
    epoch = [(xs[i : i + 32], ys[i : i + 32]) for i in range(0, 512, 32)]
    scaler = torch.amp.GradScaler("cpu", init_scale=2.0**10)
    train(net, (epoch * 4)[:50], scaler, lambda name, step, value: None)
    with torch.no_grad():
        print(f"loss after 50 steps: {F.mse_loss(net(xs), ys).item():.4f}")

# mypy: disable-error-code="no-untyped-call"
