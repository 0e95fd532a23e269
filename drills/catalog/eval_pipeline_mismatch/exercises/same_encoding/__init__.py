"""Fix the encoding: the evaluation script builds its inputs from its own template, which writes
a start token the tokenizer adds again and skips the lower-casing the training code does, so
every token sits one place late and capitalised words (the product's name among them) become
<unk>; the router, right on every training ticket, scores chance.

Accepted as fixes: anything that gives every ticket exactly the training code's ids: calling
the training encoder, or the template repaired (no <bos> in it, both fields lower-cased), or
the template's own special tokens kept with the tokenizer's turned off. The judge compares ids
ticket by ticket and scores a router it trains itself; a fix that passes on tickets as they are
usually written but not on tickets typed in capitals (un-capitalising the first letters only)
fails on the second kind of run.
"""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

# The two kinds of hidden run (problem.py builds them; kept here, torch-free, for the listing).
CASES = ("tickets as written", "tickets typed in capitals")

EXERCISE = Exercise(
    slug="evaluation-encodes-like-training",
    drill="eval-pipeline-mismatch",
    title="Evaluation pipeline: a router that guesses at evaluation",
    kind="fix",
    **exercise_files(__file__),
    hints=(
        "The weights are the same in training and in evaluation; what else reaches the model? "
        "Take one evaluation ticket and encode it with both functions.",
        "Token ids are hard to read: put tokenizer.decode() of both encodings side by side, "
        "token by token. Does every token sit where the router learned to find it, and is "
        "every word one the tokenizer knows?",
        "Count the start tokens: the template writes one and tokenizer.encode() adds one "
        "itself. Then compare what each function does to the text before encoding it.",
    ),
    provides=("encode_for_evaluation",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("encoded", "Every hidden evaluation ticket comes back encoded (token ids)"),
        CheckSpec(
            "same-ids",
            "Every evaluation ticket gets exactly the token ids the training code gives it",
        ),
        CheckSpec(
            "scores-like-training",
            "A router trained the usual way scores your encoded tickets as it scores them "
            "encoded the training way",
        ),
    ),
    cases=CASES,
)
