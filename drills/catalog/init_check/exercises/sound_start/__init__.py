"""Fix the init: a hand-written init_weights() draws every weight from a standard normal. Each
ReLU layer then multiplies the activations' size by about the square root of half its fan-in,
the logits start in the hundreds, the first loss is hundreds of times ln(C), and the SGD steps
that follow end near chance or in NaN.

Accepted as fixes: hidden weights scaled by their own fan-in for ReLU (variance 2 / fan-in;
normal, uniform or orthogonal) with a small output layer (the reference: std 0.1 / sqrt(fan-in),
the first loss then at ln(C)), or PyTorch's own default (reset_parameters() on each layer), for
which the hidden networks are kept no deeper than four layers. The judge hands init_weights()
its own networks with every parameter unset, so a fix must set each weight and bias, and a
constant worked out for the story's width of 64 meets other widths.

Rejected, each by a check that says why (seeds 0-39): only the output layer shrunk (the first
loss looks right on the story's network, but the hidden activations grow to 31-491 times the
inputs' size and the hidden layers get about 1/1000 of the output layer's gradient); every
weight zero (the loss is ln(C) exactly, but nothing passes back and every unit of a layer is
the same unit); one std of sqrt(2 / 64) everywhere (1.5-2.7 times ln(C) on the wider network);
hidden biases of -1.5 (most units of a layer dead); weights of std 0.01 (the signal fades to
nothing). Also rejected, though not kept as fixtures: Kaiming on every layer, the output one
included (1.2-3 times ln(C) somewhere on every seed), and a zero output layer (no gradient
reaches a hidden layer at step 0, which the drill reads as dead units; it trains all the same).
Xavier on every layer passes on most seeds and fails the first-loss check on 3 in 40 (up to
1.29 times ln(2) on the two-class network).
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="init-check-sound-start",
    drill="init-check",
    title="Check the initialisation: a network sure of itself before it has learned",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Print the size (RMS) of each layer's output for one batch, from the inputs up to the "
        "logits. What does each layer do to it, and what would it take for a layer to leave it "
        "as it found it?",
        "A unit adds up fan-in products of weight and input: its output's variance is fan-in "
        "times the weights' variance times the input's, and a ReLU keeps half of it. Choose the "
        "weights' spread from each layer's own fan-in, not from one number, and let the output "
        "layer start small so that the softmax starts out even.",
        "For each hidden nn.Linear, draw weights with std sqrt(2 / in_features) and set the bias "
        "to 0; draw the output layer's with a tenth of sqrt(1 / in_features), bias 0. Small, not "
        "zero: a zero output layer passes no gradient back at step 0.",
    ),
    provides=("init_weights",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "init_weights() sets every weight and bias of the judge's networks"),
        CheckSpec("first-loss", "Before any update, the loss is within 20% of ln(C)"),
        CheckSpec(
            "activations",
            "Every hidden layer's activations stay between 1/50 and 10 times the inputs' size",
        ),
        CheckSpec(
            "gradients",
            "At step 0 every layer gets a gradient, none below 1/100 of the layer above's",
        ),
        CheckSpec(
            "live-units", "No hidden layer starts with more than three quarters of its ReLUs dead"
        ),
        CheckSpec("units-differ", "The units of each hidden layer start different from each other"),
        CheckSpec("learns", "The judge's 100 steps of SGD take the loss below 0.8 ln(C)"),
    ),
    cases=(
        "the story's network",
        "the deeper network",
        "the wider network",
        "the two-class network",
    ),
)
