"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). The text is the drill's Markov source (drills/kit/
causal_lm.py); the model is a smaller causal transformer that shifts its labels itself."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.kit.causal_lm import (
    IGNORE,
    CausalTransformer,
    MarkovSource,
    ModelConfig,
    SourceConfig,
    TextBatch,
    decode_token,
)

SOURCE = SourceConfig()
# Smaller than the drill's model: one run must take well under a second, and learning which two
# letters follow each letter needs little more than the current token.
MODEL = ModelConfig(vocab=SOURCE.vocab, seq_len=SOURCE.seq_len, width=24, heads=2, layers=1)
STEPS = 60  # Adam steps, each on a fresh batch
BATCH = 16  # sequences per step
LR = 3e-2  # peak learning rate, cosine-decayed to 0 so the loss settles
# The hidden batches the learner's labels are compared on: (sequences, positions). The short
# one has no padding at all; the last one is also where the trained model is measured.
PROBES = ((8, SOURCE.seq_len), (3, 20), (64, SOURCE.seq_len))
MEASURED = len(PROBES) - 1


class ShiftingLM(nn.Module):
    """A causal LM that shifts its labels itself, like Hugging Face's *ForCausalLM classes: the
    logit at position t is scored against labels[:, t + 1]."""

    def __init__(self) -> None:
        super().__init__()
        self.lm = CausalTransformer(MODEL)

    def forward(
        self, input_ids: torch.Tensor, labels: torch.Tensor | None = None
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        logits = self.lm(input_ids)
        return logits, None if labels is None else shifted_loss(logits, labels)


def shifted_loss(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(
        logits[:, :-1].reshape(-1, logits.shape[-1]),
        labels[:, 1:].reshape(-1),
        ignore_index=IGNORE,
    )


@dataclass(frozen=True)
class LabelBatch:
    """One batch as a Hugging Face pipeline hands it over."""

    input_ids: torch.Tensor  # (B, T) int64
    attention_mask: torch.Tensor  # (B, T) int64: 1 real token, 0 padding
    response_mask: torch.Tensor  # (B, T) bool: the response's tokens

    def copy(self) -> LabelBatch:
        """What prepare_labels() is handed: it may change it, the batch stays as it was."""
        return LabelBatch(
            self.input_ids.clone(), self.attention_mask.clone(), self.response_mask.clone()
        )

    def stacked(self) -> torch.Tensor:
        """The three tensors as one (3, B, T) int64 tensor: how a copy handed to
        prepare_labels() was left, sent back to be compared outside with the batch."""
        return torch.stack(
            [self.input_ids, self.attention_mask, self.response_mask.to(torch.int64)]
        )


def label_batch(batch: TextBatch, length: int = SOURCE.seq_len) -> LabelBatch:
    response = ~batch.is_prompt & ~batch.is_pad
    return LabelBatch(
        batch.tokens[:, :length].clone(),
        (~batch.is_pad[:, :length]).to(torch.int64),
        response[:, :length].clone(),
    )


@dataclass
class Problem:
    source: MarkovSource
    model: ShiftingLM  # at its initial weights, fixed by the seed
    data_rng: torch.Generator  # the training batches, in order


def build(seed: int) -> Problem:
    data_rng = torch.Generator().manual_seed(seed)
    source = MarkovSource(SOURCE, data_rng)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = ShiftingLM()
    return Problem(source, model, data_rng)


def probe_batches(source: MarkovSource, seed: int) -> list[LabelBatch]:
    generator = torch.Generator().manual_seed(seed + 7919)  # apart from the training batches
    return [label_batch(source.sample(count, generator), length) for count, length in PROBES]


def cosine_lr(step: int) -> float:
    return LR * 0.5 * (1.0 + math.cos(math.pi * step / STEPS))


def show_token(token: int) -> str:
    """A token as the messages quote it: its letter, or a marker for padding or ignored."""
    return repr(decode_token(token, SOURCE))
