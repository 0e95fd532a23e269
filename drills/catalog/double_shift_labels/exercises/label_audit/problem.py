"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside). One batch of the drill's Markov text (drills/kit/
causal_lm.py), its labels built by the drill's own label modes, as the loss pairs them with
the logits (build_targets: the target of position t, full length, IGNORE where nothing counts).

The report crosses the sandbox's wall as two tensors: "report", int64 [shift (-1 for None),
padding_masked, prompt_masked], and "empty_rows", bool (B,): True for a row the report names."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from drills.kit.causal_lm import MarkovSource, SourceConfig, TextBatch, build_targets

SOURCE = SourceConfig()
# What each hidden run is, in the order of the exercise's cases: (label mode, rows truncated
# to their prompt). A truncated row is a prompt that filled the whole window: nothing to learn.
FAULTS = (
    ("shift-once", False),
    ("no-shift", False),
    ("shift-twice", False),
    ("pad-in-loss", False),
    ("prompt-in-loss", False),
    ("shift-once", True),
    ("all-masked", False),
)


@dataclass(frozen=True)
class LabelBatch:
    input_ids: torch.Tensor  # (B, T) int64
    targets: torch.Tensor  # (B, T) int64: the token position t's logit is scored against
    attention_mask: torch.Tensor  # (B, T) int64: 1 real token, 0 padding
    prompt_mask: torch.Tensor  # (B, T) bool: the prompt's tokens
    mode: str  # how the targets were built (drills/kit/causal_lm.py LABEL_MODES)


def build(case: int, seed: int) -> LabelBatch:
    mode, truncated = FAULTS[case]
    generator = torch.Generator().manual_seed(seed)
    source = MarkovSource(SOURCE, generator)
    count = 4 + int(torch.randint(9, (1,), generator=generator))  # 4..12 rows
    batch = source.sample(count, generator)
    if truncated:
        rows = torch.randperm(count, generator=generator)[: 1 + seed % 3]
        batch = truncate(batch, rows)
    return LabelBatch(
        batch.tokens.clone(),
        build_targets(batch, mode),
        (~batch.is_pad).to(torch.int64),
        batch.is_prompt.clone(),
        mode,
    )


def truncate(batch: TextBatch, rows: torch.Tensor) -> TextBatch:
    """The batch with `rows` made of prompt alone, counting on to the end of the window."""
    tokens, is_prompt, is_pad = batch.tokens.clone(), batch.is_prompt.clone(), batch.is_pad.clone()
    length = tokens.shape[1]
    for row in rows.tolist():
        start = int(tokens[row, 0]) - SOURCE.prompt_base
        letters = (start + torch.arange(length)) % SOURCE.prompt_symbols
        tokens[row] = SOURCE.prompt_base + letters
        is_prompt[row] = True
        is_pad[row] = False
    lengths = batch.response_lengths.clone()
    lengths[rows] = 0
    return TextBatch(tokens, is_prompt, is_pad, lengths)
