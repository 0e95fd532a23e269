"""A tiny causal language model, the synthetic text it learns, and how labels are lined up.

The text has a known answer for every question a loss can ask of it. Each sequence is

    prompt (12 tokens)  ·  response (8–18 tokens)  ·  padding up to 32 positions

- The prompt counts through its own 8-letter alphabet (a b c … h a b …) from a random letter:
  after the first letter every prompt token is certain, so it is cheap to predict.
- The response is a first-order Markov chain over 16 letters A…P: each letter has exactly two
  successors, equally likely, so the best possible next-token loss is ln 2. Predicting two steps
  ahead is harder: its floor, the two-step entropy, follows from the square of the transition
  matrix (ln 4 when a letter's four two-step destinations are all different).
- Padding fills the rest, so sequences of different lengths fit in one batch.

Label construction is written twice, vectorised (`build_targets`) and as a plain loop
(`build_targets_loop`); the tests check that they agree for every way of building labels.
"""

from __future__ import annotations

import math
import string
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

IGNORE = -100  # cross_entropy's default ignore_index: a label that does not count

# How the labels are built: the drill's `labels` knob.
LABEL_MODES = (
    "shift-once",
    "shift-twice",
    "no-shift",
    "pad-in-loss",
    "all-masked",
    "prompt-in-loss",
)


@dataclass(frozen=True)
class SourceConfig:
    response_symbols: int = 16  # A…P, the Markov chain's letters
    prompt_symbols: int = 8  # a…h, the counting prompt's letters
    prompt_length: int = 12
    # The response has min_response + (index of the prompt's first letter) letters: 10…17, so
    # every sequence ends in 3 to 10 PADs, and a model that reads the prompt knows where.
    min_response: int = 10
    seq_len: int = 32

    @property
    def max_response(self) -> int:
        return self.min_response + self.prompt_symbols - 1

    @property
    def prompt_base(self) -> int:
        return self.response_symbols  # prompt letters follow the response letters

    @property
    def pad(self) -> int:
        return self.response_symbols + self.prompt_symbols

    @property
    def vocab(self) -> int:
        return self.pad + 1


@dataclass(frozen=True)
class TextBatch:
    tokens: torch.Tensor  # (B, T) int64 token ids
    is_prompt: torch.Tensor  # (B, T) bool
    is_pad: torch.Tensor  # (B, T) bool
    response_lengths: torch.Tensor  # (B,) int64


class MarkovSource:
    """The synthetic text: a counting prompt, then a two-successor Markov chain, then padding."""

    def __init__(self, config: SourceConfig, generator: torch.Generator) -> None:
        if 2 * config.prompt_symbols != config.response_symbols:
            raise ValueError("the entry table maps each prompt letter to two response letters")
        if config.prompt_length + config.max_response > config.seq_len:
            raise ValueError("the longest sequence does not fit in seq_len")
        self.config = config
        letters = config.response_symbols
        # Two permutations give every letter two successors and every letter two predecessors,
        # so the chain never drifts away from the uniform letter distribution it starts in.
        first = torch.randperm(letters, generator=generator)
        second = torch.randperm(letters, generator=generator)
        while bool((first == second).any()):  # a letter's two successors must differ
            second = torch.randperm(letters, generator=generator)
        self.successors = torch.stack([first, second], dim=1)  # (letters, 2)
        # The last prompt letter picks the first response letter, also from two choices. The
        # table is a permutation of all letters, so the response starts uniformly distributed.
        self.entry = torch.randperm(letters, generator=generator).view(config.prompt_symbols, 2)

    def transition_matrix(self) -> torch.Tensor:
        letters = self.config.response_symbols
        matrix = torch.zeros(letters, letters, dtype=torch.float64)
        for column in range(2):
            matrix[torch.arange(letters), self.successors[:, column]] += 0.5
        return matrix

    def sample(self, count: int, generator: torch.Generator) -> TextBatch:
        c = self.config
        tokens = torch.full((count, c.seq_len), c.pad, dtype=torch.int64)
        start = torch.randint(c.prompt_symbols, (count,), generator=generator)
        offsets = torch.arange(c.prompt_length)
        tokens[:, : c.prompt_length] = c.prompt_base + (start[:, None] + offsets) % c.prompt_symbols

        coins = torch.randint(2, (count, c.max_response), generator=generator)
        last_prompt_letter = (start + c.prompt_length - 1) % c.prompt_symbols
        letter = self.entry[last_prompt_letter, coins[:, 0]]
        tokens[:, c.prompt_length] = letter
        for i in range(1, c.max_response):
            letter = self.successors[letter, coins[:, i]]
            tokens[:, c.prompt_length + i] = letter

        lengths = c.min_response + start  # the prompt's first letter says how long to answer
        positions = torch.arange(c.seq_len)
        is_pad = positions[None, :] >= c.prompt_length + lengths[:, None]
        tokens[is_pad] = c.pad
        is_prompt = (positions < c.prompt_length)[None, :].expand(count, -1).clone()
        return TextBatch(tokens, is_prompt, is_pad, lengths)


def conditional_entropy(transition: torch.Tensor) -> float:
    """Mean entropy (nats) of the rows of a transition matrix, under a uniform letter mix.

    Over all sequences the letter mix is uniform at every response position (see MarkovSource),
    so this is the chain's floor for predicting the letter one matrix-step ahead. (Near the
    prompt boundary, and because longer responses start from some letters more than others, the
    targets of a real batch sit a hair away from it.)
    """
    p = transition
    logs = torch.where(p > 0, p.log(), torch.zeros_like(p))
    return float(-(p * logs).sum(dim=1).mean())


def entropy_references(source: MarkovSource) -> tuple[float, float]:
    """(next-token entropy, two-step entropy) of the response chain, in nats."""
    matrix = source.transition_matrix()
    return conditional_entropy(matrix), conditional_entropy(matrix @ matrix)


# --- Labels -------------------------------------------------------------------------------------


def label_shift(mode: str) -> int:
    """How many positions ahead of the logit its target sits, for each way of building labels.

    Correct: the data pipeline copies the inputs and the loss shifts once. "shift-twice": the
    pipeline already shifted and the loss shifts again (a model that shifts internally fed
    pre-shifted labels). "no-shift": nobody shifts, so the target is the input itself.
    """
    if mode not in LABEL_MODES:
        raise ValueError(f"unknown label mode {mode!r}")
    return {"no-shift": 0, "shift-twice": 2}.get(mode, 1)


def build_targets(batch: TextBatch, mode: str) -> torch.Tensor:
    """The target each logit position is scored against (B, T); IGNORE where nothing counts.

    Equivalent to the usual `logits[:, :-1]` against `labels[:, 1:]`, but kept at full length
    so every position lines up with its input token in the diagnostics.
    """
    shift = label_shift(mode)
    labels = batch.tokens.clone()
    # The loss mask, applied to the labels before any shifting, as a data pipeline would.
    if mode != "pad-in-loss":
        labels[batch.is_pad] = IGNORE
    if mode != "prompt-in-loss":
        labels[batch.is_prompt] = IGNORE
    if mode == "all-masked":
        labels.fill_(IGNORE)
    targets = torch.full_like(labels, IGNORE)
    length = labels.shape[1]
    targets[:, : length - shift] = labels[:, shift:]
    return targets


def build_targets_loop(batch: TextBatch, mode: str) -> list[list[int]]:
    """The same as `build_targets`, one position at a time: the reference it is tested against."""
    shift = label_shift(mode)
    tokens = batch.tokens.tolist()
    is_prompt = batch.is_prompt.tolist()
    is_pad = batch.is_pad.tolist()
    targets = []
    for b, row in enumerate(tokens):
        row_targets = []
        for t in range(len(row)):
            source = t + shift
            counted = (
                source < len(row)
                and mode != "all-masked"
                and (mode == "pad-in-loss" or not is_pad[b][source])
                and (mode == "prompt-in-loss" or not is_prompt[b][source])
            )
            row_targets.append(row[source] if counted else IGNORE)
        targets.append(row_targets)
    return targets


def decode_token(token: int, config: SourceConfig) -> str:
    if token == IGNORE:
        return "·ignored·"
    if token == config.pad:
        return "·PAD·"
    if token >= config.prompt_base:
        return string.ascii_lowercase[token - config.prompt_base]
    return string.ascii_uppercase[token]


# --- Model --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelConfig:
    vocab: int
    seq_len: int
    width: int = 48
    heads: int = 4
    layers: int = 2
    # The causal mask. False is a bug a drill injects: every position then also attends to the
    # positions after it, among them the token its label is.
    causal: bool = True


class CausalSelfAttention(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.heads = config.heads
        self.causal = config.causal
        self.qkv = nn.Linear(config.width, 3 * config.width)
        self.proj = nn.Linear(config.width, config.width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        batch, length, width = x.shape
        q, k, v = self.qkv(x).split(width, dim=2)
        q, k, v = (t.view(batch, length, self.heads, -1).transpose(1, 2) for t in (q, k, v))
        # is_causal: position t attends to positions 0..t only, its own token included.
        y = F.scaled_dot_product_attention(q, k, v, is_causal=self.causal)
        return self.proj(y.transpose(1, 2).reshape(batch, length, width))  # type: ignore[no-any-return]


class Block(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.norm1 = nn.LayerNorm(config.width)
        self.attention = CausalSelfAttention(config)
        self.norm2 = nn.LayerNorm(config.width)
        self.mlp = nn.Sequential(
            nn.Linear(config.width, 4 * config.width),
            nn.GELU(),
            nn.Linear(4 * config.width, config.width),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attention(self.norm1(x))
        return x + self.mlp(self.norm2(x))  # type: ignore[no-any-return]


class CausalTransformer(nn.Module):
    """A nanoGPT-style decoder: token + position embeddings, pre-norm blocks, a linear head."""

    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.token_embedding = nn.Embedding(config.vocab, config.width)
        self.position_embedding = nn.Embedding(config.seq_len, config.width)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.norm = nn.LayerNorm(config.width)
        self.head = nn.Linear(config.width, config.vocab)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        positions = torch.arange(tokens.shape[1])
        x = self.token_embedding(tokens) + self.position_embedding(positions)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))  # type: ignore[no-any-return]


def chance_loss(config: SourceConfig) -> float:
    return math.log(config.vocab)
