"""Fix the loop: the drill's imbalanced classifier, trained on plain cross-entropy over data with
few rare examples, where the classes overlap a lot. The loss falls, accuracy reads the common
class's share, and the model never names the rare class: where the two overlap, the loss that
counts every example once is lowest for the answer "common".

Accepted as fixes: any training that weighs both classes alike, sized from the labels it is
given: cross-entropy weighted by the inverse class counts (the reference), batches drawn with as
many rare examples as common ones, or a plain model whose output bias is moved by the log of the
class odds afterwards (a decision threshold for equal shares, built into the weights). Judged on
the weights alone, scored outside on the judge's own examples at other rare shares (2% and 15%)
than the starter's 5%, class by class. Rejected, each with its reason: a change to the loop's
own evaluation (held-back set with equal classes, another number reported), a longer run at a
lower rate, a correction sized for 5%, and one made twice (weights on batches already drawn to
equal shares), which calls nearly everything rare.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="loss-vs-metric-rare-class",
    drill="loss-vs-metric",
    title="Loss vs metric: the rare class the model never names",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "Count, on the held-back records, how many of the cases the model calls a case, and how "
        "many ordinary records it calls ordinary, separately. What does 95% accuracy mean when "
        "95% of the records are ordinary?",
        "Scoring the model differently does not change what it answers. Look at what the loss "
        "asks of the model: each record counts once, so where the two kinds overlap, the answer "
        "that loses least is the common one. Change what training asks for, not how you measure.",
        "Make both classes weigh the same in the loss: pass weight=len(labels) / (2 * counts) to "
        "cross_entropy, with counts = torch.bincount(labels, minlength=2) counted from the labels "
        "you are given (the judge's share is not 5%, so no fixed number will do). Drawing batches "
        "with as many cases as ordinary records works too, but not both at once.",
    ),
    provides=("train",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The trained weights come back whole (every tensor, finite)"),
        CheckSpec(
            "finds-rare",
            "On the judge's own examples, the trained model finds a good share of the rare ones",
        ),
        CheckSpec(
            "keeps-common",
            "It still calls most of the common examples common",
        ),
        CheckSpec(
            "balanced-accuracy",
            "Weighing both classes alike, its accuracy comes near the best any classifier "
            "reaches on the same examples",
        ),
    ),
    cases=("run A", "run B"),
)
