"""Synthetic texts for the tiny causal LM where every letter is a fair draw: a coin or a die.

Same layout as MarkovSource's text (prompt, response, padding; see causal_lm.py), but no letter
depends on the one before it. Each position has its own group of letters (two for a coin, four
for a four-sided die), and a fair draw picks one of them, in the prompt and in the response
alike. So, with `sides` letters to a group:

- predicting the next letter costs ln(sides), and so does predicting the letter after it: the
  two-step entropy equals the next-token entropy, and labels pointing one position too far
  ahead cost nothing a loss curve would show;
- prompt letters are as hard as response letters: counting them in the loss does not pull it
  down;
- the prompt's first letter is a draw too, and whether it is the even or the odd letter of its
  group sets the answer's length, so responses are 10 or 11 letters long and padding fills more
  of each row;
- on the die (ln 4 = 1.39), sound labels settle where labels two ahead settle on the
  two-successor text: a loss floor means nothing until you know which text you are on.
"""

from __future__ import annotations

import math

import torch

from drills.kit.causal_lm import SourceConfig, TextBatch


class CoinSource:
    """Every letter a fair draw among its position's `sides` letters (2: a coin, 4: a die)."""

    def __init__(self, config: SourceConfig, generator: torch.Generator, sides: int = 2) -> None:
        if sides < 2 or config.prompt_symbols % sides or config.response_symbols % sides:
            raise ValueError(
                f"{sides} sides do not split the {config.prompt_symbols} prompt letters and the "
                f"{config.response_symbols} response letters into whole groups"
            )
        self.config = config
        self.sides = sides
        # The response positions cycle through groups that cover A-P once between them.
        self.groups = torch.randperm(config.response_symbols, generator=generator).view(-1, sides)

    def entropies(self) -> tuple[float, float]:
        """(next-token entropy, two-step entropy): both ln(sides), every letter a fair draw."""
        return math.log(self.sides), math.log(self.sides)

    def sample(self, count: int, generator: torch.Generator) -> TextBatch:
        c = self.config
        tokens = torch.full((count, c.seq_len), c.pad, dtype=torch.int64)
        prompt_draws = torch.randint(self.sides, (count, c.prompt_length), generator=generator)
        # Prompt position i draws among the `sides` letters from sides * i on (wrapping at h).
        offsets = (self.sides * torch.arange(c.prompt_length)) % c.prompt_symbols
        tokens[:, : c.prompt_length] = c.prompt_base + offsets + prompt_draws
        response_draws = torch.randint(self.sides, (count, c.max_response), generator=generator)
        rows = torch.arange(c.max_response) % self.groups.shape[0]
        tokens[:, c.prompt_length : c.prompt_length + c.max_response] = self.groups[
            rows, response_draws
        ]
        # The first letter sets the length: its group's even letters 10, its odd letters 11.
        lengths = c.min_response + prompt_draws[:, 0] % 2
        positions = torch.arange(c.seq_len)
        is_pad = positions[None, :] >= c.prompt_length + lengths[:, None]
        tokens[is_pad] = c.pad
        is_prompt = (positions < c.prompt_length)[None, :].expand(count, -1).clone()
        return TextBatch(tokens, is_prompt, is_pad, lengths)
