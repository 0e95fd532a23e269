import math

import pytest
import torch

from drills.catalog.overfit_one_batch.setup import (
    OverfitConfig,
    broadcast_mse,
    entropy_of_labels,
    make_batch,
    probability_of_true_class,
)


@pytest.mark.parametrize(("examples", "counts"), [(1, [1]), (2, [1, 1]), (5, [2, 1, 1, 1])])
def test_labels_are_balanced_as_far_as_the_batch_allows(examples: int, counts: list[int]) -> None:
    batch = make_batch(OverfitConfig(examples=examples), torch.Generator().manual_seed(3))
    assert sorted(torch.bincount(batch.labels).tolist(), reverse=True) == counts


def test_the_batch_depends_only_on_the_seed() -> None:
    first, again = (make_batch(OverfitConfig(), torch.Generator().manual_seed(7)) for _ in (1, 2))
    assert torch.equal(first.features, again.features)
    assert torch.equal(first.labels, again.labels)
    assert not torch.equal(
        first.features, make_batch(OverfitConfig(), torch.Generator().manual_seed(8)).features
    )


def test_broadcast_mse_matches_a_loop_over_every_pair() -> None:
    prediction, target = torch.randn(5, 1), torch.randn(5)
    loss, caught = broadcast_mse(prediction, target)
    pairs = [(float(p) - float(t)) ** 2 for p in prediction[:, 0] for t in target]
    assert float(loss) == pytest.approx(sum(pairs) / len(pairs), rel=1e-6)
    assert caught and "target size" in caught[0]


def test_broadcast_mse_is_smallest_at_the_mean_and_equals_the_variance_there() -> None:
    target = torch.tensor([1.0, 2.0, 6.0, 7.0])
    at_mean, _ = broadcast_mse(target.mean().expand(4, 1), target)
    assert float(at_mean) == pytest.approx(float(target.var(correction=0)))
    nudged, _ = broadcast_mse((target.mean() + 0.1).expand(4, 1), target)
    assert float(nudged) > float(at_mean)


def test_entropy_of_labels_matches_the_formula() -> None:
    labels = torch.tensor([0, 0, 1, 2, 3])
    expected = -sum(p * math.log(p) for p in (0.4, 0.2, 0.2, 0.2))
    assert entropy_of_labels(labels, 4) == pytest.approx(expected)
    assert entropy_of_labels(torch.tensor([2]), 4) == 0.0


def test_probability_of_true_class_matches_a_loop() -> None:
    logits, labels = torch.randn(6, 4), torch.tensor([0, 1, 2, 3, 0, 1])
    probs = logits.softmax(dim=-1)
    expected = sum(float(probs[i, labels[i]]) for i in range(6)) / 6
    assert probability_of_true_class(logits, labels) == pytest.approx(expected)
