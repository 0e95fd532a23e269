"""Double-shifted labels (reference solution): audit_labels().

The loss scores the logit at position t against targets[:, t] and does no shifting of its own:
targets are the labels exactly as the loss sees them. A label of -100 does not count.

    returns         {"shift": 0 | 1 | 2 | None, "padding_masked": bool,
                     "prompt_masked": bool, "rows_without_targets": [row, ...]}

    shift is the one s among 0, 1 and 2 with targets[b, t] == input_ids[b, t + s] for every
    counted label; None when no label counts. A counted label at t is a padding or prompt token
    when position t + shift is padding or prompt; with shift None, both masks hold.
"""

import torch

IGNORE = -100


def ahead(values: torch.Tensor, s: int, fill: int) -> torch.Tensor:
    """values[:, t + s] at position t; `fill` where t + s runs off the end of the row."""
    moved = torch.full_like(values, fill)
    moved[:, : values.shape[1] - s] = values[:, s:]
    return moved


def audit_labels(
    input_ids: torch.Tensor,
    targets: torch.Tensor,
    attention_mask: torch.Tensor,
    prompt_mask: torch.Tensor,
) -> dict[str, object]:
    counted = targets != IGNORE
    fits = [s for s in (0, 1, 2) if bool((targets == ahead(input_ids, s, IGNORE))[counted].all())]
    # Nothing counted: every s "fits" vacuously, and there is nothing to line up.
    shift = fits[0] if bool(counted.any()) and len(fits) == 1 else None
    # A label's token comes from position t + shift: read the masks there, not at t.
    s = shift or 0
    padding = counted & ahead((attention_mask == 0).long(), s, 0).bool()
    prompt = counted & ahead(prompt_mask.long(), s, 0).bool()
    return {
        "shift": shift,
        "padding_masked": shift is None or not bool(padding.any()),
        "prompt_masked": shift is None or not bool(prompt.any()),
        "rows_without_targets": [row for row, any_ in enumerate(counted.any(dim=1)) if not any_],
    }


if __name__ == "__main__":
    # A local try (the judge ignores this block): prompt 0 1, response 5 6 7, then padding (9).
    ids = torch.tensor([[0, 1, 5, 6, 7, 9, 9]])
    attention, prompt = (ids != 9).long(), ids < 2
    targets = torch.tensor([[-100, 5, 6, 7, -100, -100, -100]])  # shifted once, masked
    print(audit_labels(ids, targets, attention, prompt))
