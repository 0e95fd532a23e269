"""Write it: re-measure the training set in eval mode (no graph, dropout off, the model's mode
restored, no weight changed). The starter forgets model.eval(), so its number carries dropout
and sits up with the logged training loss, making validation look easier than training."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="eval-mode-remeasure",
    drill="val-below-train",
    title="Re-measure the training set the way validation is measured",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "Call your function twice in a row on the same model and data. Do you get the same "
        "number twice? Should you?",
        "Something in the model behaves differently while it trains than while it is "
        "evaluated, and your validation code switches it. Switch it here too, and measure "
        "without building a graph.",
        "Remember the mode the model was in (model.training), call model.eval(), compute the "
        "loss under torch.no_grad(), then put the model back with model.train(was_training), "
        "also when something raises (try/finally).",
    ),
    provides=("train_loss_in_eval_mode",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The model's weights come back whole (every tensor, finite)"),
        CheckSpec("returns-a-number", "It returns a plain number, off the autograd graph"),
        CheckSpec(
            "eval-mode-loss", "The number is the training set's loss measured like validation"
        ),
        CheckSpec("restores-the-mode", "The model is left in the mode it was in"),
        CheckSpec("leaves-weights-alone", "No weight changes"),
    ),
)
