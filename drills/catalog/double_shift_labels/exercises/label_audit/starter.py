"""Double-shifted labels. Write audit_labels().

The loss scores the logit at position t against targets[:, t] and does no shifting of its own:
targets are the labels exactly as the loss sees them. A label of -100 does not count.

    input_ids       (B, T) int64: token ids, each row a prompt, then a response, then padding
    targets         (B, T) int64: the label of each position, or -100
    attention_mask  (B, T) int64: 1 on real tokens, 0 on padding
    prompt_mask     (B, T) bool: True on the prompt's tokens
    returns         a dict:

        {"shift": 1,                  # 0, 1, 2 or None, see below
         "padding_masked": True,      # no label that counts is a padding token
         "prompt_masked": True,       # no label that counts is a prompt token
         "rows_without_targets": []}  # the rows (ascending) where no label counts

    shift is how far ahead of its position each counted label's token sits: the one s among
    0, 1 and 2 with targets[b, t] == input_ids[b, t + s] for every counted label (1 is right
    for this loss: each logit predicts the next token). None when no label counts at all.
    A counted label at position t is "a padding token" or "a prompt token" when position
    t + shift is padding (attention_mask 0) or prompt; with shift None, both masks hold.
"""

import torch

IGNORE = -100


def audit_labels(
    input_ids: torch.Tensor,
    targets: torch.Tensor,
    attention_mask: torch.Tensor,
    prompt_mask: torch.Tensor,
) -> dict[str, object]:
    raise NotImplementedError("write audit_labels()")


if __name__ == "__main__":
    # A local try (the judge ignores this block): prompt 0 1, response 5 6 7, then padding (9).
    ids = torch.tensor([[0, 1, 5, 6, 7, 9, 9]])
    attention, prompt = (ids != 9).long(), ids < 2
    targets = torch.tensor([[-100, 5, 6, 7, -100, -100, -100]])  # shifted once, masked
    print(audit_labels(ids, targets, attention, prompt))
