"""Token tagger. Fix TinyAttention and train() so that padding changes nothing.

The judge builds TinyAttention(16) from your file and loads its own weights into it (on hidden
seeds). It runs model(tokens) on sequences padded to two lengths and on each sequence alone,
takes one step of train() on a padded batch, and trains a fresh model with train().

    tokens   (B, L) int64: real tokens 1..10, then PAD up to the batch's length
    labels   (B, L) int64: 1 where a token's value is above its sequence's mean, else 0; PAD_LABEL
             where the token is PAD. model(tokens) returns (B, L, 3) logits over 0, 1, PAD_LABEL
    batches  a list of (tokens, labels), each padded to one length; report(name, step, value)
             draws a point on your live curve
"""

import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

PAD, PAD_LABEL = 0, 2
LR = 0.01


class TinyAttention(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(11, width)
        self.query = nn.Linear(width, width)
        self.key = nn.Linear(width, width)
        self.value = nn.Linear(width, width)
        self.head = nn.Linear(2 * width, 3)  # reads each token beside what it attended to

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        h = self.embed(tokens)
        scores = self.query(h) @ self.key(h).transpose(1, 2) / math.sqrt(h.shape[-1])
        attended = torch.softmax(scores, dim=-1) @ self.value(h)
        out: torch.Tensor = self.head(torch.cat([h, attended], dim=-1))
        return out


def train(
    model: nn.Module,
    batches: list[tuple[torch.Tensor, torch.Tensor]],
    report: Callable[[str, int, float], None],
) -> None:
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    for step, (tokens, labels) in enumerate(batches):
        logits = model(tokens)
        loss = F.cross_entropy(logits.reshape(-1, 3), labels.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        report("loss", step, loss.item())


if __name__ == "__main__":
    # A local run (the judge ignores this block): the same sequences padded to 16, then to 64.
    torch.manual_seed(0)
    value, lengths = torch.randn(11), torch.randint(4, 17, (256,)).tolist()
    sequences = [torch.randint(1, 11, (n,)) for n in lengths]
    logged: list[float] = []  # both runs' points: the last 8 are the latest run's
    for pad_to in (16, 64):
        tokens, labels = torch.full((256, pad_to), PAD), torch.full((256, pad_to), PAD_LABEL)
        for row, s in enumerate(sequences):
            tokens[row, : len(s)], labels[row, : len(s)] = s, (value[s] > value[s].mean()).long()
        batches = [(tokens[i : i + 32], labels[i : i + 32]) for i in range(0, 256, 32)] * 12
        torch.manual_seed(1)
        train(TinyAttention(16), batches, lambda name, step, v: logged.append(v))
        print(f"padded to {pad_to}: logged loss {sum(logged[-8:]) / 8:.3f}")

# mypy: disable-error-code="no-untyped-call"
