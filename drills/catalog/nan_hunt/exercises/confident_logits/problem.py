"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The data and the network are the drill's own
(drills/catalog/nan_hunt/setup.py, cause "none"): padded batches of 8 sequences of up to 12
tokens labelled by a linear teacher, and the token classifier whose head divides its logits by
0.1, so that they grow large as it gets sure of itself.

Each hidden run holds three things the judge hands the learner's code:
- a probe: logits of the judge's choosing for log_probs(), ordinary ones beside tokens sure of
  one class by 30 to 1000 (right or wrong about the label), tokens whose logits all sit hundreds
  away from zero, and padding;
- a confident checkpoint for one step of train(): the initial network with its output layer
  scaled until its logits on the first batch are up to CONFIDENT_GAP apart (the drill's clean
  run gets past 104 within 150 steps, and to 300 or more in longer runs), where float32's exp
  rounds the classes far below the top to probability 0;
- the drill's stream of STEPS batches for a training run from the initial weights, and fresh
  batches to measure its held-out loss on.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import torch

from drills.catalog.nan_hunt.setup import Batch, NanHuntConfig, TokenClassifier, make_batch

CONFIG = NanHuntConfig()  # cause "none": the stream the clean drill trains on
STEPS = CONFIG.steps  # batches of a training run: 150, as in the drill
HELD_OUT = 16  # fresh batches the trained weights are measured on
CONFIDENT_GAP = 300.0  # the checkpoint's largest top-minus-bottom logit gap on its batch
# How far a probe token's favoured class sits above the rest; 1000 is past float64's own
# underflow (exp(-745) rounds to 0 there), so a log of a softmax taken in float64 fails too.
PROBE_GAPS = (30.0, 90.0, 120.0, 250.0, 500.0, 800.0, 1000.0)
PROBE_OFFSET = 600.0  # tokens whose logits all sit about this far above or below zero
# The probe's positions (8 x 12 = 96), by kind: shuffled over the batch by the seed.
ORDINARY, RIGHT, WRONG, SHIFTED, PADDING = range(5)
PROBE_KINDS = (ORDINARY,) * 24 + (RIGHT,) * 24 + (WRONG,) * 24 + (SHIFTED,) * 12 + (PADDING,) * 12


class TokenScorer(TokenClassifier):
    """The drill's token classifier up to its sharpened logits: the log-probabilities are the
    loop's own to compute."""

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        return self.score(features)


@dataclass(frozen=True)
class Probe:
    logits: torch.Tensor  # (8, 12, 4) float32
    labels: torch.Tensor  # (8, 12) int64, 0 at padding
    mask: torch.Tensor  # (8, 12) bool, True at real tokens


@dataclass(frozen=True)
class Problem:
    model: TokenScorer  # at its initial weights, fixed by the seed
    confident: TokenScorer  # the same with its output layer scaled (see CONFIDENT_GAP)
    stream: list[Batch]  # STEPS batches, one a step
    held_out: list[Batch]
    probe: Probe


def build(case: int, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    teacher = torch.randn(CONFIG.features, CONFIG.classes, generator=generator)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TokenScorer(CONFIG)
    stream = [make_batch(CONFIG, generator, teacher, step) for step in range(STEPS)]
    # Drawn as ordinary steps (1), after the stream: no empty sequence, never trained on.
    held_out = [make_batch(CONFIG, generator, teacher, 1) for _ in range(HELD_OUT)]
    probe = make_probe(torch.Generator().manual_seed(seed + 1))
    return Problem(model, make_confident(model, stream[0]), stream, held_out, probe)


def make_confident(model: TokenScorer, batch: Batch) -> TokenScorer:
    confident = copy.deepcopy(model)
    with torch.no_grad():
        logits = model(batch.features)[batch.mask]
        gap = float((logits.amax(dim=-1) - logits.amin(dim=-1)).max())
        confident.head.weight.mul_(CONFIDENT_GAP / gap)
        confident.head.bias.mul_(CONFIDENT_GAP / gap)
    return confident


def make_probe(generator: torch.Generator) -> Probe:
    shape = (CONFIG.sequences, CONFIG.length)
    classes = CONFIG.classes
    kinds = torch.tensor(PROBE_KINDS)[torch.randperm(len(PROBE_KINDS), generator=generator)]
    logits = 2 * torch.randn(len(kinds), classes, generator=generator)
    labels = torch.randint(0, classes, (len(kinds),), generator=generator)
    favoured = torch.randint(0, classes, (len(kinds),), generator=generator)
    sure = {RIGHT: 0, WRONG: 0, PADDING: 0}  # each kind meets every gap in PROBE_GAPS
    for position, kind in enumerate(kinds.tolist()):
        if kind in sure:
            if kind == RIGHT:
                favoured[position] = labels[position]
            elif kind == WRONG and favoured[position] == labels[position]:
                favoured[position] = (labels[position] + 1) % classes
            logits[position, favoured[position]] += PROBE_GAPS[sure[kind] % len(PROBE_GAPS)]
            sure[kind] += 1
        elif kind == SHIFTED:
            logits[position] += PROBE_OFFSET * (1 if position % 2 else -1)
    mask = kinds != PADDING
    return Probe(
        logits.reshape(*shape, classes), (labels * mask).reshape(shape), mask.reshape(shape)
    )


def fresh_model(problem: Problem) -> TokenScorer:
    return copy.deepcopy(problem.model)


def fresh_confident(problem: Problem) -> TokenScorer:
    return copy.deepcopy(problem.confident)


def as_triples(batches: list[Batch]) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """The batches as new (features, labels, mask) tensors: the problem keeps its own."""
    return [(b.features.clone(), b.labels.clone(), b.mask.clone()) for b in batches]


def token_loss64(logits: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """The mean negative log-likelihood over real tokens, in float64, the stable way."""
    log_probs = torch.log_softmax(logits.double(), dim=-1)[mask]
    return -log_probs.gather(-1, labels[mask].unsqueeze(-1)).mean()


def held_out_loss(weights: dict[str, torch.Tensor], problem: Problem) -> float:
    """The held-out batches' loss per real token at `weights`, in float64."""
    model = copy.deepcopy(problem.model).double()
    model.load_state_dict({name: value.double() for name, value in weights.items()})
    total, tokens = 0.0, 0
    with torch.no_grad():
        for batch in problem.held_out:
            count = int(batch.mask.sum())
            loss = token_loss64(model(batch.features.double()), batch.labels, batch.mask)
            total, tokens = total + float(loss) * count, tokens + count
    return total / tokens
