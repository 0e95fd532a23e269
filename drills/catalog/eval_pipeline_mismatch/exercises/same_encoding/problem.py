"""The hidden runs of the encoding exercise, rebuilt from a seed with trusted code: the drill's
tokenizer (built for the launch products), evaluation tickets to encode, and the training and
held-out tickets the judge trains and scores its own router with.

Two kinds of run: tickets as the drill writes them (first word of the subject and the product
capitalised), and tickets typed all in capitals, as some customers write; the training code
lower-cases both alike.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from drills.catalog.eval_pipeline_mismatch.exercises.same_encoding import CASES
from drills.catalog.eval_pipeline_mismatch.problem import (
    LAUNCH,
    MAX_TOKENS,
    Ticket,
    WordTokenizer,
    encode_for_training,
    make_tickets,
    team_table,
    vocabulary_words,
)

EVAL_TICKETS = 256
TRAIN_TICKETS = 1024  # about 8 per launch product: the router learns every one


@dataclass(frozen=True)
class Problem:
    tokenizer: WordTokenizer
    evaluation: list[Ticket]  # what the learner's function encodes
    train: list[Ticket]
    holdout: list[Ticket]  # drawn like the training tickets


def build(case: int, seed: int) -> Problem:
    generator = torch.Generator().manual_seed(seed)
    teams = team_table(LAUNCH, generator)
    evaluation = make_tickets(EVAL_TICKETS, LAUNCH, teams, generator)
    if CASES[case] == "tickets typed in capitals":
        evaluation = [
            replace(t, subject=t.subject.upper(), body=t.body.upper()) for t in evaluation
        ]
    holdout = make_tickets(EVAL_TICKETS, LAUNCH, teams, generator)
    train = make_tickets(TRAIN_TICKETS, LAUNCH, teams, generator)
    return Problem(WordTokenizer(vocabulary_words(LAUNCH)), evaluation, train, holdout)


def padded(tokenizer: WordTokenizer, rows: list[list[int]]) -> torch.Tensor:
    return torch.tensor([tokenizer.pad(row) for row in rows], dtype=torch.int64)


def training_ids(problem: Problem, tickets: list[Ticket]) -> list[list[int]]:
    """The tickets as the training code encodes them: the reference."""
    return [encode_for_training(problem.tokenizer, ticket) for ticket in tickets]


__all__ = ["CASES", "MAX_TOKENS", "Problem", "build", "padded", "training_ids"]
