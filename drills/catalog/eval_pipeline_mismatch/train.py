"""The training loop of "Evaluation pipeline mismatch": a ticket router trained on texts encoded
one way, then scored on evaluation texts encoded by the evaluation pipeline, on the same texts
encoded the training way, and on fresh texts drawn like the training set.

Kept apart from the drill's description (__init__.py) so that only a worker process that actually
trains imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from drills.catalog.eval_pipeline_mismatch.problem import (
    LAUNCH,
    MAX_TOKENS,
    NEW,
    TEAMS,
    Ticket,
    WordTokenizer,
    as_tensors,
    encode_for_evaluation,
    encode_for_training,
    ids_digest,
    make_tickets,
    team_table,
    vocabulary_words,
)
from drills.catalog.eval_pipeline_mismatch.signature import PipelineSignature
from drills.core.contract import DrillOutcome, Reporter
from drills.kit.run import Run
from drills.kit.tables import table

Encoded = tuple[torch.Tensor, torch.Tensor]  # (ids, teams)


@dataclass(frozen=True)
class PipelineConfig:
    evaluation: str = "training"  # the evaluation pipeline (PIPELINES)
    eval_products: str = "launch"  # the products the evaluation tickets name: launch or new
    train_products: str = "launch"  # launch, or launch-and-new (tokenizer and training set)
    train_size: int = 1024  # training tickets: about 8 per product at the default
    steps: int = 150  # full-batch AdamW steps
    lr: float = 0.01
    # Decoupled weight decay: it keeps the weights that only fit noise words small, so a model
    # that has seen every product generalises to 99-100% (without it, 89-98% on seeds 0-4).
    weight_decay: float = 1.0
    eval_size: int = 512  # evaluation tickets, and as many held-out ones
    embedding: int = 16
    hidden: int = 64
    eval_every: int = 10  # steps between two scorings of the evaluation texts


@dataclass(frozen=True)
class TicketData:
    tokenizer: WordTokenizer
    evaluation: list[Ticket]  # the tickets the evaluation scores
    train: Encoded
    holdout: Encoded  # drawn like the training tickets, encoded the training way
    evaluated: Encoded  # the evaluation tickets, evaluation pipeline
    reencoded: Encoded  # the same tickets, training pipeline
    eval_rows: list[list[int]]  # unpadded, evaluation pipeline
    reencoded_rows: list[list[int]]  # unpadded, training pipeline


class TicketRouter(nn.Module):
    """Embeds each token and reads every position with weights of its own (it knows word order,
    as models of text do): which team should answer the ticket."""

    def __init__(self, vocabulary: int, embedding: int, hidden: int) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocabulary, embedding)
        self.hidden = nn.Linear(MAX_TOKENS * embedding, hidden)
        self.head = nn.Linear(hidden, TEAMS)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.hidden(self.embed(ids).flatten(1))))  # type: ignore[no-any-return]


def build_data(config: PipelineConfig, generator: torch.Generator) -> TicketData:
    """Drawn in a fixed order (teams, both evaluation sets, held-out, training), so that every
    setting of the knobs scores the very same evaluation tickets of a source."""
    teams = {**team_table(LAUNCH, generator), **team_table(NEW, generator)}
    by_source = {
        "launch": make_tickets(config.eval_size, LAUNCH, teams, generator),
        "new": make_tickets(config.eval_size, NEW, teams, generator),
    }
    trained_on = LAUNCH if config.train_products == "launch" else LAUNCH + NEW
    holdout = make_tickets(config.eval_size, trained_on, teams, generator)
    train = make_tickets(config.train_size, trained_on, teams, generator)
    tokenizer = WordTokenizer(vocabulary_words(trained_on))
    evaluation = by_source[config.eval_products]
    eval_rows = [encode_for_evaluation(tokenizer, t, config.evaluation) for t in evaluation]
    reencoded_rows = [encode_for_training(tokenizer, t) for t in evaluation]

    def training_way(tickets: list[Ticket]) -> Encoded:
        return as_tensors(tokenizer, [encode_for_training(tokenizer, t) for t in tickets], tickets)

    return TicketData(
        tokenizer=tokenizer,
        evaluation=evaluation,
        train=training_way(train),
        holdout=training_way(holdout),
        evaluated=as_tensors(tokenizer, eval_rows, evaluation),
        reencoded=as_tensors(tokenizer, reencoded_rows, evaluation),
        eval_rows=eval_rows,
        reencoded_rows=reencoded_rows,
    )


@torch.no_grad()
def score(model: nn.Module, data: Encoded) -> tuple[float, float]:
    """(mean cross-entropy, accuracy) of the model on (ids, teams)."""
    model.eval()
    logits = model(data[0])
    model.train()
    loss = float(F.cross_entropy(logits, data[1]))
    return loss, float((logits.argmax(dim=1) == data[1]).float().mean())


def train(knobs: dict[str, Any], seed: int, report: Reporter) -> DrillOutcome:
    """Train the router on tickets encoded the training way; see EvalPipelineMismatch."""
    config = PipelineConfig(
        evaluation=knobs["evaluation"],
        eval_products=knobs["eval_products"],
        train_products=knobs["train_products"],
        train_size=knobs["train_size"],
        steps=knobs["steps"],
        lr=knobs["lr"],
    )
    run = Run(seed, report)
    data = build_data(config, run.data_rng)
    model = TicketRouter(len(data.tokenizer.vocabulary), config.embedding, config.hidden)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.lr, weight_decay=config.weight_decay
    )
    run.watch(model, optimizer)
    ids, teams = data.train
    for step in range(config.steps):
        loss = F.cross_entropy(model(ids), teams)
        if run.stop_if_nonfinite(step, loss.item()):
            break
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]
        run.after_backward()
        optimizer.step()
        run.log("train_loss", step, loss.item())
        if step % config.eval_every == 0 or step == config.steps - 1:
            log_scores(run, model, data, step)

    signature = measure(run, model, data, config)
    inputs = {
        "shapes": {
            "training": list(data.train[0].shape),
            "evaluation": list(data.evaluated[0].shape),
            "held_out": list(data.holdout[0].shape),
        },
        "vocabulary": len(data.tokenizer.vocabulary),
        "sha256": ids_digest(data.train[0], data.train[1], data.evaluated[0], data.holdout[0]),
        "examples": decoded_pairs(data, 3),
    }
    tables = [
        table(
            "encodings",
            "Evaluation tickets, encoded by each pipeline and decoded back to tokens",
            ["ticket", "team", "training pipeline", "evaluation pipeline", "same ids"],
            [
                [row["text"], row["team"], row["training"], row["evaluation"], row["same ids"]]
                for row in decoded_pairs(data, 6)
            ],
            note="Each row: one evaluation text, encoded by the training code and by the "
            "evaluation code, decoded back to tokens by the same tokenizer.",
        )
    ]
    return run.outcome(signature, inputs=inputs, tables=tables)


def log_scores(run: Run, model: nn.Module, data: TicketData, step: int) -> None:
    eval_loss, eval_accuracy = score(model, data.evaluated)
    run.log("eval_loss", step, eval_loss)
    run.log("eval_accuracy", step, eval_accuracy)
    run.log("reencoded_accuracy", step, score(model, data.reencoded)[1])
    run.log("holdout_accuracy", step, score(model, data.holdout)[1])
    run.log("train_accuracy", step, score(model, data.train)[1])


def measure(
    run: Run, model: nn.Module, data: TicketData, config: PipelineConfig
) -> PipelineSignature:
    """The signature, every number measured on the final weights and the encoded texts."""
    pairs = list(zip(data.eval_rows, data.reencoded_rows, strict=True))
    unknown = data.tokenizer.ids["<unk>"]
    signature = PipelineSignature(
        train_examples=len(data.train[1]),
        eval_examples=len(data.evaluation),
        chance_accuracy=1.0 / TEAMS,
        initial_train_loss=run.first("train_loss"),
        train_loss=run.tail_mean("train_loss"),
        ids_differ_share=sum(a != b for a, b in pairs) / len(pairs),
        length_change=sum(len(a) - len(b) for a, b in pairs) / len(pairs),
        unknown_share=share_of(unknown, data.eval_rows),
        reencoded_unknown_share=share_of(unknown, data.reencoded_rows),
        steps_run=len(run.values("train_loss")),
    )
    if run.nonfinite_step is None:
        _, signature.train_accuracy = score(model, data.train)
        signature.eval_loss, signature.eval_accuracy = score(model, data.evaluated)
        signature.reencoded_loss, signature.reencoded_accuracy = score(model, data.reencoded)
        signature.holdout_loss, signature.holdout_accuracy = score(model, data.holdout)
    return signature


def share_of(token: int, rows: list[list[int]]) -> float:
    total = sum(len(row) for row in rows)
    return sum(row.count(token) for row in rows) / total if total else 0.0


def decoded_pairs(data: TicketData, count: int) -> list[dict[str, Any]]:
    """The first evaluation tickets as text, and each encoding decoded back to tokens."""
    decode = data.tokenizer.decode
    return [
        {
            "text": f"{ticket.subject} | {ticket.body}",
            "team": ticket.team,
            "training": decode(trained),
            "evaluation": decode(evaluated),
            "same ids": trained == evaluated,
        }
        for ticket, trained, evaluated in zip(
            data.evaluation[:count], data.reencoded_rows, data.eval_rows, strict=False
        )
    ]
