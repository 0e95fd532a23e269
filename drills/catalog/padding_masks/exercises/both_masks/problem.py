"""The hidden problem of the both-masks exercise, rebuilt from a seed: trusted code for both the
harness (inside the sandbox) and the checks (outside). The sequences are the drill's own
(drills/catalog/padding_masks/problem.py): 4-16 tokens, each labelled by whether its value lies
above its sequence's mean, padded with PAD (labelled PAD_CLASS); the model is the drill's
TinyAttention at its width of 16, whose forward the checks run as the reference."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from drills.catalog.padding_masks.problem import (
    PAD,
    Sequences,
    TinyAttention,
    make_sequences,
    pad_batch,
    token_values,
)

WIDTH = 16  # the drill's model
EXAMPLES = 512  # training sequences
HELD_OUT = 48  # sequences the model is probed and scored on, never trained on
BATCH = 32
STEPS = 100  # Adam steps in a training run: a right loop's held-out loss is near its floor
PAD_TO = (24, 64)  # per hidden run: the length every training batch is padded to
PROBE_PAD_TO = 128  # the second length the held-out sequences are padded to


@dataclass(frozen=True)
class Problem:
    pad_to: int  # the training batches' length
    initial: dict[str, torch.Tensor]  # TinyAttention's weights at the start, fixed by the seed
    batches: list[tuple[torch.Tensor, torch.Tensor]]  # (tokens, labels), in training order
    held_out: Sequences  # unpadded

    @property
    def probe_lengths(self) -> tuple[int, int]:
        return (self.pad_to, PROBE_PAD_TO)


def build(case: int, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    values = token_values(generator)
    data = make_sequences(EXAMPLES, values, generator)
    held_out = make_sequences(HELD_OUT, values, generator)
    pad_to = PAD_TO[case]
    batches: list[tuple[torch.Tensor, torch.Tensor]] = []
    while len(batches) < STEPS:  # shuffled epochs, cut at STEPS batches
        order = torch.randperm(EXAMPLES, generator=generator).tolist()
        for start in range(0, EXAMPLES - BATCH + 1, BATCH):
            tokens, labels, _ = pad_batch(data, order[start : start + BATCH], pad_to)
            batches.append((tokens, labels))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = TinyAttention(WIDTH)
    initial = {name: t.detach().clone() for name, t in model.state_dict().items()}
    return Problem(pad_to, initial, batches[:STEPS], held_out)


def padded(held_out: Sequences, pad_to: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The held-out sequences padded to `pad_to`: tokens, and True where a token is real."""
    tokens, _, is_real = pad_batch(held_out, list(range(len(held_out))), pad_to)
    return tokens, is_real


def reference_model(weights: dict[str, torch.Tensor]) -> TinyAttention:
    """The problem's model with these weights, in float64: the forward the checks trust."""
    model = TinyAttention(WIDTH).double()
    model.load_state_dict({name: t.double() for name, t in weights.items()})
    return model


@torch.no_grad()
def alone(weights: dict[str, torch.Tensor], held_out: Sequences) -> list[torch.Tensor]:
    """Each held-out sequence's logits (length, 3) with the sequence run by itself: no padding,
    so nothing to mask. The reference a real token's output padded is compared with."""
    model = reference_model(weights)
    return [model(tokens[None, :], None)[0] for tokens in held_out.tokens]


def is_padding(tokens: torch.Tensor) -> torch.Tensor:
    return tokens == PAD
