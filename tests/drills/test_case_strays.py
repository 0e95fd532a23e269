"""Draws on which a planted cause does not read as its verdict, found by `python -m drills cases
audit` on random seeds (the tables are built on seeds 0-9, where these causes hold).

Each is a defect of the case pool: a learner who meets the draw reads the run right and is
told otherwise, or meets a run its story does not describe. They are kept here, strict, so the
suite says what is known to be wrong and fails (XPASS) the day a change fixes one: then the
entry must go. Found at --seeds 10 --origin 777, --seeds 20 --origin 4242 and --seeds 20
--origin 99 (3 misses in 5,520 runs, then 7 in 3,680), then counted on more seeds per cause.
"""

from typing import Any

import pytest

from drills.cases import audit
from drills.cases.registry import all_case_sets

STRAYS = [
    # One example per step whose step raises the whole set's loss by 3.1% (the drill's line
    # for a steady run is 3%; seeds 0-4 stay under 1.3%): "inconclusive", where the cause
    # claims ordinary batch noise. 1 of 20 draws at --origin 99, 0 of 300 at origins 5 and 6.
    ("batch-noise", "only-noise", {}, 1067004398, "inconclusive"),
    # A corrupt example, one per step, whose loss (5.2) is only 1.67x the worst the clean set
    # gives (3.1), under the drill's twice: "inconclusive". 1 of 200 draws at --origin 6.
    ("batch-noise", "corrupt-batch", {}, 2022628111, "inconclusive"),
    # Too large a rate (3, clipped at 2) that spikes too seldom to read as unstable: the replay
    # pins its worst jump on one batch, so the run reads "inconclusive" (1 of 20 draws at
    # --origin 777), or it hardly spikes at all and reads "clean" (2 of 200 at --origin 5).
    # A rate typed into the loop is the same run step for step, and strays on the same draws.
    ("loss-spikes", "steps-too-large", {}, 1914885928, "inconclusive"),
    ("loss-spikes", "rate-typed-into-the-loop", {"lr": 0.4}, 1914885928, "inconclusive"),
    # A corrupt batch whose step knocks the next two batches up too: 16 spikes, 7 of them at
    # its place, under the half that counts as recurring, so the run reads "unstable" (1 of 100
    # draws at either rate, --origin 5). The finder counts one echo, not two.
    ("loss-spikes", "corrupt-batch", {"lr": 0.4}, 22819762, "unstable"),
    ("loss-spikes", "loader-mislabels-a-batch", {"lr": 0.4}, 22819762, "unstable"),
    # log(softmax(z)) whose logits never grow 104 apart within 150 steps: the run ends clean, and
    # "nan-some-way-in" says the loss reads NaN: 1 of 40 draws at --origin 4242, 7 of 400 at
    # the last unusual step (120) and 4 of 200 at the first on other seeds. A sharper head
    # (0.08) breaks it on all but 1 of 1,200, but three of seeds 0-4 then end the sound loop at
    # 0.74-1.88 (its test asks under 0.5); a larger rate (0.06) does the same.
    ("nan-hunt", "log-of-softmax", {"unusual_step": 20}, 2015074883, "clean"),
    # A rate of 5 that knocks the model back and then lets it learn (the loss climbs to 3.9x
    # its start, then ends 14% below it): "healthy" by the drill's own lines. 3 of 200 draws
    # at --origin 777, 4 of 300 on others, where another 4 overflowed and the curve stopped
    # early. A narrower net (32) at 6 still strays, on 1 of 500 and 2 of 300.
    ("silent-no-learning", "rate-too-large", {"steps": 150}, 1322019967, "healthy"),
    # 512 training examples the model hardly fits better than fresh data (re-scored 0.381
    # against validation's 0.384, both near their floors): the losses read as sound dropout,
    # which they are, and a learner who says so is marked wrong. 12 of 150 draws at dropout 0.3
    # and 3 of 150 at 0.2 (--origin 5, since the subset is repeated to fill an epoch and
    # shuffled as a whole; 19 of 300 and 3 of 300 when it was reshuffled at each pass): how
    # much a 16-unit net with dropout fits the subset depends on the teacher a seed draws. A
    # smaller subset fits more and gives itself away on the first screen (at 320 examples the
    # shares rose to 0.53-1).
    ("val-below-train", "memorised-training-set", {"dropout": 0.3}, 1356321087, "train-noise"),
    # The same 512 examples repeated to fill 8,192 rows train the very same run, batch for
    # batch, so they stray on the very same draws.
    ("val-below-train", "rows-repeated", {"dropout": 0.3}, 1356321087, "train-noise"),
]


def planted(drill: str, cause: str, corner: dict[str, Any]) -> audit.Planted:
    case_set = next(case_set for case_set in all_case_sets() if case_set.drill == drill)
    return next(
        entry
        for entry in audit.planted([case_set])
        if entry.cause == cause and corner.items() <= entry.corner.items()
    )


@pytest.mark.parametrize(
    ("drill", "cause", "corner", "seed", "read"),
    [
        pytest.param(
            *stray,
            id=f"{stray[0]}-{stray[1]}-{stray[3]}",
            # Only a wrong reading is expected: a run that fails otherwise fails the test.
            marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason="see STRAYS"),
        )
        for stray in STRAYS
    ],
)
def test_every_draw_reads_as_its_planted_cause(
    drill: str, cause: str, corner: dict[str, Any], seed: int, read: str
) -> None:
    entry = planted(drill, cause, corner)
    reading = audit.read(drill, entry.knobs, seed)
    if reading not in (entry.verdict, read):  # not the known stray: fail, not xfail
        pytest.fail(f"read {reading}: neither {entry.verdict} nor the stray's {read}")
    assert reading == entry.verdict
