"""What a run of "Evaluation pipeline mismatch" reports (torch-free, so the description can name
it).

Every accuracy and loss is measured on the weights the run ends with. The evaluation texts are
scored twice: encoded by the evaluation pipeline (what the evaluation reports) and encoded by the
training pipeline (the same texts, the same weights: only the encoding differs). A held-out set
drawn like the training set, encoded the training way, tells how well the model generalises
where nothing about the texts or their encoding changed.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.core.contract import Signature


@dataclass
class PipelineSignature(Signature):
    train_examples: int | None = None
    eval_examples: int | None = None
    chance_accuracy: float | None = None  # 1 / the number of teams
    initial_train_loss: float | None = None  # the first step's training loss
    train_loss: float | None = None  # mean of the last 10% of steps
    train_accuracy: float | None = None  # on the training set, at the end
    eval_loss: float | None = None  # the evaluation texts, evaluation pipeline
    eval_accuracy: float | None = None
    reencoded_loss: float | None = None  # the same texts, training pipeline
    reencoded_accuracy: float | None = None
    holdout_loss: float | None = None  # fresh texts drawn like training, training pipeline
    holdout_accuracy: float | None = None
    # Share of evaluation texts whose token ids differ between the two pipelines
    ids_differ_share: float | None = None
    # Mean number of tokens the evaluation pipeline gives a text minus the training pipeline's
    length_change: float | None = None
    unknown_share: float | None = None  # share of evaluation-pipeline tokens that are <unk>
    reencoded_unknown_share: float | None = None  # the same, training pipeline
    steps_run: int | None = None
