"""The hidden data of the wrong-labels exercise, rebuilt from a seed: trusted code for both
the harness (inside the sandbox) and the checks (outside). The points and the model are the
drill's own (drills/catalog/loss_spikes/setup.py): 160 examples in 10 batches of 16, 8 epochs in
the same order, plain gradient descent at 0.5. Unlike the drill, the batch whose labels are wrong
is never at the drill's place 6 and only some of its examples are wrong, each moved to a random
other class: a fix must find the examples, not remember where the drill put them."""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn

from drills.catalog.loss_spikes.setup import MLP, Dataset, SpikesConfig, make_dataset

CONFIG = SpikesConfig(bad_batch="off")  # the drill's sizes, rate and spike finder; labels intact
# Places the wrong labels may sit at: any but the drill's (a fix that drops place 6 keeps them).
PLACES = tuple(place for place in range(1, CONFIG.batches) if place != CONFIG.bad_position)
# Wrong labels in that batch, per hidden run: many, then few (a few dilute the batch's loss, so
# a fixed cut-off on it that the drill's fully wrong batch would pass misses them).
WRONG_ROWS = ((9, 12), (4, 6))
MARGIN = 1.0  # how much nearer its own class mean an example given a wrong label must sit
MAX_STEPS = 400  # steps the judge follows (8 epochs of 10 batches is 80)


@dataclass(frozen=True)
class Problem:
    inputs: torch.Tensor  # (batches, batch_size, features): what train() is given
    labels: torch.Tensor  # (batches, batch_size): as given, some wrong
    true_labels: torch.Tensor  # (batches, batch_size): the correct ones
    model: nn.Module  # at its initial weights, fixed by the seed
    place: int  # the batch that holds the wrong labels
    clear: torch.Tensor  # (batches * batch_size,) bool: examples clearly in their own class

    @property
    def wrong(self) -> torch.Tensor:
        """(batches * batch_size,) bool: the examples whose given label is wrong."""
        return (self.labels != self.true_labels).flatten()


def build(case: int, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    data = make_dataset(CONFIG, generator)
    place = PLACES[int(torch.randint(len(PLACES), (1,), generator=generator))]
    low, high = WRONG_ROWS[case]
    count = int(torch.randint(low, high + 1, (1,), generator=generator))
    # Only examples that sit clearly in their own class are given another label: a point that
    # noise carried over to another class's side cannot be told from its label, by anyone.
    clear = clearly_in_class(data.inputs.flatten(0, 1), data.true_labels.flatten(), data)
    order = torch.randperm(CONFIG.batch_size, generator=generator)
    rows = order[clear.view(CONFIG.batches, -1)[place, order]][:count]
    moves = torch.randint(1, CONFIG.classes, (count,), generator=generator)
    labels = data.true_labels.clone()
    labels[place, rows] = (labels[place, rows] + moves) % CONFIG.classes
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = MLP(CONFIG)
    return Problem(data.inputs, labels, data.true_labels, model, place, clear)


def clearly_in_class(inputs: torch.Tensor, labels: torch.Tensor, data: Dataset) -> torch.Tensor:
    """Which of `inputs` lie nearer their own class's mean than any other's, by MARGIN or more
    (the means taken over all the data, with the correct labels)."""
    every = data.inputs.flatten(0, 1)
    truth = data.true_labels.flatten()
    means = torch.stack([every[truth == c].mean(dim=0) for c in range(CONFIG.classes)])
    distances = torch.cdist(inputs, means)
    own = distances.gather(1, labels[:, None]).flatten()
    distances.scatter_(1, labels[:, None], torch.inf)
    return distances.min(dim=1).values - own >= MARGIN


def fresh_model(problem: Problem) -> nn.Module:
    """A new model at the problem's initial weights."""
    model = MLP(CONFIG)
    model.load_state_dict(problem.model.state_dict())
    return model
