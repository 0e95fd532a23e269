"""A second synthetic text for the tiny causal LM: every letter is a coin flip.

Same layout as MarkovSource's text (prompt, response, padding; see causal_lm.py), but no letter
depends on the one before it. Each position has its own pair of letters, and a fair coin picks
one of the two, in the prompt and in the response alike. So:

- predicting the next letter costs ln 2, and so does predicting the letter after it: the
  two-step entropy equals the next-token entropy, and labels pointing one position too far ahead
  cost nothing a loss curve would show;
- prompt letters are as hard as response letters: counting them in the loss does not pull it
  down;
- the prompt's first letter is a coin flip too (a or b), and it still sets the answer's length,
  so responses are 10 or 11 letters long and padding fills more of each row.
"""

from __future__ import annotations

import math

import torch

from drills.kit.causal_lm import SourceConfig, TextBatch


class CoinSource:
    """The coin-flip text: at each position a fair coin picks one of that position's two letters."""

    def __init__(self, config: SourceConfig, generator: torch.Generator) -> None:
        if 2 * config.prompt_symbols != config.response_symbols:
            raise ValueError("the response letters form one pair per prompt letter")
        self.config = config
        # The response positions cycle through eight pairs that cover A-P once each.
        self.pairs = torch.randperm(config.response_symbols, generator=generator).view(-1, 2)

    def entropies(self) -> tuple[float, float]:
        """(next-token entropy, two-step entropy): both ln 2, every letter being a fair coin."""
        return math.log(2), math.log(2)

    def sample(self, count: int, generator: torch.Generator) -> TextBatch:
        c = self.config
        tokens = torch.full((count, c.seq_len), c.pad, dtype=torch.int64)
        prompt_coins = torch.randint(2, (count, c.prompt_length), generator=generator)
        # Prompt position i picks between the letters 2i and 2i + 1 (wrapping around a-h).
        offsets = (2 * torch.arange(c.prompt_length)) % c.prompt_symbols
        tokens[:, : c.prompt_length] = c.prompt_base + offsets + prompt_coins
        response_coins = torch.randint(2, (count, c.max_response), generator=generator)
        rows = torch.arange(c.max_response) % self.pairs.shape[0]
        tokens[:, c.prompt_length : c.prompt_length + c.max_response] = self.pairs[
            rows, response_coins
        ]
        lengths = c.min_response + prompt_coins[:, 0]  # the first letter (a or b) sets the length
        positions = torch.arange(c.seq_len)
        is_pad = positions[None, :] >= c.prompt_length + lengths[:, None]
        tokens[is_pad] = c.pad
        is_prompt = (positions < c.prompt_length)[None, :].expand(count, -1).clone()
        return TextBatch(tokens, is_prompt, is_pad, lengths)
