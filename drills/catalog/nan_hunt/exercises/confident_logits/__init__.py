"""Fix the loop: the drill's token classifier takes log(softmax(z)) of logits it divides by 0.1.
As it gets sure of itself the logits spread past about 104, float32's softmax rounds the classes
that far below the top to 0, log(0) is -inf, and its gradient (1/0 times 0) is NaN: some dozens
of steps in, the weights turn NaN.

Accepted as fixes: log_softmax (the reference), logits minus their logsumexp, the same written
out by hand around the largest logit, or cross_entropy on the logits with log_probs made
stable too. The judge reads no loss the loop logs: it compares log_probs on its own probe
logits (up to 1000 apart, and hundreds away from zero) with float64, and the gradient of the
token loss through it; it takes one step of the loop from a network whose logits are 300 apart;
and it measures the held-out loss after a run from fresh weights. Wrong fixes it names: an
epsilon in the log (finite, but a log-probability capped near log(eps) and no gradient on a
confident mistake), nan_to_num on the loss and the gradients (finite, and the step on a
confident batch is zero), skipping non-finite steps (the confident step is skipped), a smaller
learning rate or clipping the gradient (log_probs is unchanged, and the confident step is NaN:
clipping scales NaN to NaN), and the log of a float64 softmax (exp underflows in float64 too,
past about 745).
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="nan-hunt-confident-logits",
    drill="nan-hunt",
    title="Hunt the NaN: a classifier that breaks once it is sure",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Don't look at the loss: find the first tensor of the step that is not finite. Print "
        "the largest gap between a token's top and bottom logit each step, and check what "
        "log_probs returns at the step the NaN appears.",
        "What is exp(-120) in float32? Once a class sits that far below the top one, softmax "
        "gives it a probability of exactly 0. What is the log of that, and its gradient?",
        "Never form the probabilities: use torch.log_softmax(logits, dim=-1), which subtracts "
        "the largest logit and takes the log of a sum that is at least 1. Keep the loop as it "
        "was: a smaller rate, clipping or skipping bad steps only hide the NaN.",
    ),
    provides=("log_probs", "train"),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "log-probs",
            "On logits the judge chooses, some of them hundreds apart, log_probs is finite and "
            "equals the log-softmax computed in float64",
        ),
        CheckSpec(
            "log-probs-gradient",
            "The gradient of the token loss through log_probs, with respect to those logits, is "
            "finite and equals float64's",
        ),
        CheckSpec(
            "confident-step",
            "From a network whose logits are far apart, one step of the loop is finite and goes "
            "down the gradient of the token loss",
        ),
        CheckSpec(
            "learns",
            "From fresh weights, 150 steps bring the held-out loss per token to half its first "
            "value or less",
        ),
    ),
    cases=("run A", "run B"),
)
