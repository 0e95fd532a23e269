"""Variable-length losses (reference solution): the masked means twice, and compare().

losses is a [B, T] float32 or float64 tensor of per-token losses; mask is a [B, T] bool tensor,
True at a real token. Both versions return (per_sequence, overall), in the losses' dtype:

    per_sequence  shape [B]: each row's mean loss over its real tokens; 0 for a row with none
    overall       0-dim: the mean over every real token of the batch (each token weighs the
                  same, whatever its row); 0 when the batch has no real token

What a padded position holds (any number, inf and NaN included) must never reach a result.
masked_means_loop() visits the rows (or tokens) one at a time in Python; masked_means() has no
Python loop over rows or tokens.

compare(loop, vectorised) calls two such functions on random batches it draws itself (a batch
of one row, rows of one position, rows with no real token, float32 and float64, inf and NaN in
the padding) and returns True when they agree on every batch, False as soon as they differ: in
shape, in dtype, in a value by more than rounding (float32: about 1e-6 of it), NaN against a
number. The judge calls it with its own loop and versions of its own, right and wrong.
"""

from collections.abc import Callable

import torch

Means = tuple[torch.Tensor, torch.Tensor]  # (per_sequence, overall)
Version = Callable[[torch.Tensor, torch.Tensor], Means]


def masked_means_loop(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    zero = losses.new_zeros(())
    means, total, count = [], zero, 0
    for b in range(losses.shape[0]):
        row_sum, row_count = zero, 0
        for t in range(losses.shape[1]):
            if mask[b, t]:  # a padded position is never read, whatever it holds
                row_sum, row_count = row_sum + losses[b, t], row_count + 1
        means.append(row_sum / row_count if row_count else zero)
        total, count = total + row_sum, count + row_count
    per_sequence = torch.stack(means) if means else losses.new_zeros(0)
    return per_sequence, total / count if count else zero


def masked_means(losses: torch.Tensor, mask: torch.Tensor) -> Means:
    kept = torch.where(mask, losses, torch.zeros_like(losses))  # not losses * mask: inf * 0 = NaN
    counts = mask.sum(dim=1)
    sums = kept.sum(dim=1)
    # A row with no real token: 0 / 1 = 0, where 0 / 0 would be NaN.
    return sums / counts.clamp(min=1), sums.sum() / counts.sum().clamp(min=1)


def random_batch(dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    rows, width = torch.randint(1, 6, (2,)).tolist()  # 1 row and 1 position come up often
    mask = torch.rand(rows, width) < 0.6
    mask[torch.rand(rows) < 0.3] = False  # rows with no real token
    junk = torch.tensor([0.0, float("inf"), float("nan")], dtype=dtype)
    padding = junk[torch.randint(3, (rows, width))]
    return torch.where(mask, torch.rand(rows, width, dtype=dtype) * 10, padding), mask


def compare(loop: Version, vectorised: Version) -> bool:
    for trial in range(300):
        losses, mask = random_batch((torch.float32, torch.float64)[trial % 2])
        mine = loop(losses.clone(), mask.clone())
        theirs = vectorised(losses.clone(), mask.clone())
        for a, b in zip(mine, theirs, strict=True):  # shape and dtype first: allclose broadcasts
            if a.shape != b.shape or a.dtype != b.dtype:
                return False
            if not torch.allclose(a, b, rtol=1e-5, atol=1e-6):  # NaN is never close
                return False
    return True


if __name__ == "__main__":
    # A local try (the judge ignores this block and calls your functions itself).
    print("the two versions agree:", compare(masked_means_loop, masked_means))
