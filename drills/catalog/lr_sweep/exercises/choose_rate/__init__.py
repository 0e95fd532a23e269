"""Fix the loop: full-batch gradient descent at a rate fixed in the code, 1.0, at which the
loss blows up on both hidden runs; the rates that do train differ between the two by a factor of
thirty to a hundred, so no single number fixes it. The loop must choose its rate from a list of
candidates, on the data and the network it is about to train.

Accepted as fixes: a sweep of the candidates, each from the same initial weights and for as
many steps as the real run, that drops every rate whose loss overflows or jumps up and takes the
one that ends lowest (or the largest stable one, or one notch below it). Judged on plain SGD at
the chosen rate, trained outside the sandbox on each hidden run (a network of 32 units on the
drill's targets; one of 128 units on the same targets in centimetres, where the rates that
train lie thirty to a hundred times lower), and on the loss of the weights the learner's own
train() returns. Rejected, each for what it breaks: clipping the gradient to a tiny norm (the
loss never blows up, and never falls either), skipping the steps whose loss is not finite,
the rate with the lowest loss after one step or the largest that survives a short run (both
run off later), and a rate divided by ten thousand (the loss sits still).
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="lr-sweep-choose-rate",
    drill="lr-sweep",
    title="Learning-rate sweep: a loop that picks its own rate",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Train the local example at each candidate and print the loss every ten steps. Which "
        "rates leave it where it started, which bring it down, and when does each of the "
        "others turn upwards: at once, or after a while?",
        "Give every candidate the same start (a copy of the model as it came in) and the same "
        "number of steps as the real run: a rate can look fine for a dozen steps and only then "
        "run off. Drop every rate whose loss overflows or rises above 1.5 times where it "
        "started; of the rest, which one ends lowest?",
        "In choose_lr(): for each lr in candidates, losses = train(copy.deepcopy(model), x, y, "
        "lr, STEPS, a report that draws nothing); keep lr if every loss is finite and at most "
        "1.5 * losses[0]; return the kept rate whose last 15 losses have the lowest mean. Leave "
        "train() as plain SGD: clipping or skipping steps hides a rate that is too large "
        "without making it train.",
    ),
    provides=("train", "choose_lr"),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "stable-rate",
            "At the rate choose_lr() returns, plain SGD never lets the loss overflow or rise "
            "above 1.5 times its start, for the whole run",
        ),
        CheckSpec(
            "pace",
            "At that rate the loss comes down to a tenth of its start within five times the "
            "steps the fastest stable candidate needs",
        ),
        CheckSpec(
            "trains",
            "The weights your train() returns have at most a tenth of the starting loss",
        ),
    ),
    cases=("32 units, targets in metres", "128 units, targets in centimetres"),
)
