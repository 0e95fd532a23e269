"""Write it: the pipeline test that guards against a part of the model silently not learning.
The learner writes a pytest-style test_every_layer_learns(make_model, batch, loss_fn); the judge
runs it on hidden models of two designs, healthy ones (one with gradients ten thousand times
smaller than the rest, and not zero) where it must pass, and broken ones (a part cut off the
graph, a frozen layer, an output multiplied by 0, a parameter the forward never uses, a layer of
dead ReLUs) where it must fail an assert."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="pipeline-test",
    drill="break-the-graph",
    title="Write the test that every layer learns",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "The loss is the wrong witness: it falls as long as any part of the model learns. Ask "
        "each parameter, by name, what one backward left it with.",
        "A parameter can miss out in three ways that look different: it does not ask for a "
        "gradient, no gradient reaches it, or the one that arrives is exactly zero everywhere. "
        "A healthy gradient can be very small, so no threshold above zero is safe.",
        "Build the model, zero its grads, compute loss_fn(model(inputs), targets) and call "
        "backward(). Then for every (name, p) in model.named_parameters() collect the name if "
        "not p.requires_grad, or p.grad is None, or torch.count_nonzero(p.grad) == 0; finally "
        "assert that the collected list is empty, naming the parameters in the message.",
    ),
    provides=("test_every_layer_learns",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("healthy", "Your test passes on a healthy model"),
        CheckSpec(
            "small-gradients",
            "Your test passes on a healthy model of another design whose gradients are small",
        ),
        CheckSpec("cut-off", "Your test fails on a model with a part cut off the graph"),
        CheckSpec("frozen", "Your test fails on a model with a frozen layer"),
        CheckSpec("times-zero", "Your test fails on a model whose layer output is multiplied by 0"),
        CheckSpec("unused", "Your test fails on a model with a parameter its forward never uses"),
        CheckSpec("dead-relus", "Your test fails on a model with a layer of dead ReLUs"),
    ),
    cases=(
        "healthy stack",
        "healthy, small gradients",
        "a part cut off",
        "a frozen layer",
        "an output times zero",
        "a parameter never used",
        "a layer of dead ReLUs",
    ),
)
