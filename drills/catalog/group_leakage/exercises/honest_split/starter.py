"""Review scores. Fix split() so that validation estimates how the model does on new users.

The judge calls split(features, users, generator) on its own reviews (on hidden seeds, a few
datasets with different numbers of reviews per user), takes the rows you return as validation
and every other row as training, audits the two sides and trains its own model on them.

    features   (n, 20) float32: 4 features of the review's content, 16 of the writer's style
    users      (n,) int64: the account that posted each review
    generator  a torch.Generator: use it for any random choice, so a run can be replayed
    returns    a 1-D int64 tensor: the row numbers that go to validation, about a quarter of n
"""

import torch

VALIDATION_SHARE = 0.25


def split(features: torch.Tensor, users: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    n = len(users)
    order = torch.randperm(n, generator=generator)
    return order[: round(VALIDATION_SHARE * n)]


if __name__ == "__main__":
    # A local run on reviews of your own (the judge ignores this block and builds its own).
    generator = torch.Generator().manual_seed(0)
    style = torch.randn(100, 16, generator=generator)
    users = torch.arange(100).repeat_interleave(4)
    features = torch.cat([torch.randn(400, 4, generator=generator), style[users]], dim=1)
    validation = split(features, users, generator)
    training = torch.ones(len(users), dtype=torch.bool)
    training[validation] = False
    shared = torch.isin(users[validation], users[training]).float().mean()
    print(f"{len(validation)} validation rows; {shared:.0%} of them by users also in training")
