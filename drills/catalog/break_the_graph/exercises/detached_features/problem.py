"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside): the drills' backbone + head classifier and its batch."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from drills.kit.backbone_head import BackboneAndHead, BackboneHeadConfig, Data, make_data

CONFIG = BackboneHeadConfig()


@dataclass(frozen=True)
class Problem:
    model: BackboneAndHead  # at its initial weights, fixed by the seed
    data: Data


def build(seed: int) -> Problem:
    data = make_data(CONFIG, torch.Generator().manual_seed(seed))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BackboneAndHead(CONFIG)
    return Problem(model, data)


@torch.no_grad()
def batch_loss(model: torch.nn.Module, data: Data) -> float:
    model.eval()
    return float(F.cross_entropy(model(data.features), data.labels))
