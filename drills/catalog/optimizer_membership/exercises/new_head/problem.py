"""The hidden problem, rebuilt from a seed: trusted code for both the harness (inside the
sandbox) and the checks (outside): the drills' backbone + head classifier, still wearing its old
10-class head, a new 4-class head, and the batch of the new task."""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from drills.kit.backbone_head import BackboneAndHead, BackboneHeadConfig, Data, make_data

CONFIG = BackboneHeadConfig()
OLD_CLASSES = 10  # the task the model was built for


@dataclass(frozen=True)
class Problem:
    model: BackboneAndHead  # the old head still on it
    new_head: nn.Linear  # the new task's head, at its initial weights
    data: Data


def build(seed: int) -> Problem:
    data = make_data(CONFIG, torch.Generator().manual_seed(seed))
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = BackboneAndHead(CONFIG)
        model.head = nn.Linear(CONFIG.hidden, OLD_CLASSES)
        new_head = nn.Linear(CONFIG.hidden, CONFIG.classes)
    return Problem(model, new_head, data)


def initial_state(problem: Problem) -> dict[str, torch.Tensor]:
    """The weights the fine-tuned model starts from: the backbone with the new head on."""
    state = {f"backbone.{k}": v for k, v in problem.model.backbone.state_dict().items()}
    state.update({f"head.{k}": v for k, v in problem.new_head.state_dict().items()})
    return state


def fine_tuned_model(weights: dict[str, torch.Tensor]) -> BackboneAndHead:
    model = BackboneAndHead(CONFIG)
    model.load_state_dict(weights)
    return model


@torch.no_grad()
def batch_loss(model: nn.Module, data: Data) -> float:
    model.eval()
    return float(F.cross_entropy(model(data.features), data.labels))
