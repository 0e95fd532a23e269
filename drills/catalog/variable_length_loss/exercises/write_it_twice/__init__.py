"""Write it twice: the masked means of a padded batch's per-token losses (each row's mean over
its real tokens, and the batch's mean over all of them), once as a plain loop and once
vectorised, plus the compare() that checks one against the other on random inputs. The hidden
runs are batches that each stress one corner (rows with no real token, a batch of one, length
one, large float64 losses, inf and NaN in the padding, no real token at all); each also hands
the learner's compare() a version the judge wrote, two correct and five wrong in one way."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="write-it-twice",
    drill="variable-length-loss",
    title="Write the masked means twice, and compare",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "Work one row by hand: which positions count, how many are there, and what must a row "
        "with none give? Write the loop exactly that way first: it is the version you can read "
        "line by line, so it is the one you trust.",
        "In the vectorised version keep the padding out by choosing values, not by arithmetic: "
        "a number times 0 is not always 0. Divide by the count of real tokens, guarding the "
        "rows that have none. compare() must draw the inputs that break things (one row, one "
        "position, rows with no real token, both dtypes, junk in the padding) and look at "
        "shapes and dtypes before values.",
        "kept = torch.where(mask, losses, torch.zeros_like(losses)); counts = mask.sum(1); "
        "per_sequence = kept.sum(1) / counts.clamp(min=1); overall = kept.sum() / "
        "counts.sum().clamp(min=1). compare(): a few hundred random batches (rows and positions "
        "from 1 to 5, some rows all False, padding drawn from 0, inf and NaN, float32 and "
        "float64); on each, equal shapes, equal dtypes and torch.allclose(a, b, rtol=1e-5, "
        "atol=1e-6) for both results, else return False.",
    ),
    provides=("masked_means_loop", "masked_means", "compare"),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec(
            "per-sequence", "Both versions give each row the mean of its real tokens' losses"
        ),
        CheckSpec(
            "empty-rows", "A row with no real token gives 0, not NaN, and so does a batch with none"
        ),
        CheckSpec(
            "overall",
            "Both versions give the batch's mean over all its real tokens, each token weighing "
            "the same",
        ),
        CheckSpec(
            "padding-ignored", "Nothing the padding holds, inf and NaN included, reaches a result"
        ),
        CheckSpec("dtype", "Both return the losses' dtype, at float64's precision for float64"),
        CheckSpec(
            "written-twice", "The loop version loops over the batch; the vectorised one does not"
        ),
        CheckSpec(
            "compare-accepts",
            "compare() accepts correct versions that differ from a plain loop by rounding",
        ),
        CheckSpec(
            "compare-catches",
            "compare() rejects each wrong version, on an input of its own that shows the fault",
        ),
    ),
    cases=(
        "an ordinary padded batch",
        "rows with no real token",
        "a batch of one sequence",
        "sequences of length one",
        "large losses in float64",
        "padding that holds inf and NaN",
        "a batch with no real token",
    ),
)
