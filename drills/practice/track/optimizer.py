"""Review items: The optimizer and the learning rate."""

from drills.practice.review_item import ReviewItem

ITEMS: tuple[ReviewItem, ...] = (
    # -- optimizer -----------------------------------------------------------------------------
    ReviewItem(
        key="gradients-without-updates",
        topic="optimizer",
        prompt="Gradients are non-zero, but the parameters do not change after "
        "`optimizer.step()`. What do you check?",
        answer="Whether those parameters are **in the optimizer's parameter groups** (was it "
        "built before a layer was replaced?), whether the learning rate is zero, whether a "
        "gradient scaler is skipping the steps, and whether the tensor you inspect is the "
        "one the optimizer holds. Compare a parameter's value before and after a step.",
        drills=("optimizer-membership", "silent-no-learning"),
    ),
    ReviewItem(
        key="head-replaced-after-optimizer",
        topic="optimizer",
        prompt="You swap in a new classification head after the optimizer has been created. "
        "What happens during training?",
        answer="The optimizer still holds the **old** head's parameters. The new head receives "
        "gradients in every backward pass but is never updated, so it stays at its "
        "initialisation. Create the optimizer once the model is final (or add the new "
        "parameters to it).",
        drills=("optimizer-membership",),
    ),
    ReviewItem(
        key="missing-step",
        topic="optimizer",
        prompt="The loop computes a loss and calls `backward()`; gradients look healthy; "
        "nothing learns. Which call is likely missing, and what evidence shows it?",
        answer="`optimizer.step()`. A parameter audit shows finite, non-zero gradients and an "
        "update of exactly zero for every parameter. The curve is flat at its starting "
        "value.",
        drills=("silent-no-learning",),
    ),
    ReviewItem(
        key="missing-zero-grad",
        topic="optimizer",
        prompt="What happens to training when `optimizer.zero_grad()` is never called?",
        answer="Gradients **accumulate**: each step applies the sum of every gradient so far, "
        "so the effective step keeps growing and points along stale directions. Training "
        "may start normally and then oscillate or blow up. The gradient norm growing step "
        "after step is the tell.",
        drills=("silent-no-learning",),
    ),
    ReviewItem(
        key="learning-rate-both-ends",
        topic="optimizer",
        prompt="Explain in a sentence each why a learning rate far too small and one far too "
        "large both fail.",
        answer="The gain of a step grows with the learning rate η, but the penalty from the "
        "curvature of the loss grows with η². Far too small: the gain is negligible and the "
        "curve is flat. Far too large: the curvature term wins, so steps overshoot, and the "
        "loss oscillates, spikes or diverges to infinity.",
        drills=("lr-sweep",),
    ),
    ReviewItem(
        key="reading-a-sweep",
        topic="optimizer",
        prompt="How do you lay out a learning-rate sweep, and what do you log beside the loss?",
        answer="Space the rates on a **log scale** and make the range wide enough to bracket "
        "the answer: the smallest rate should barely move, the largest should spike or "
        "overflow. Log the gradient norm and the update norm too, since the update is what "
        "the learning rate actually controls. A sweep whose rates all behave alike, or that "
        "jumps straight from too small to too large, has not found the range.",
        drills=("lr-sweep",),
    ),
    ReviewItem(
        key="spike-after-calm",
        topic="optimizer",
        prompt="A spike arrives only after many normal updates, and training never recovers. "
        "What do you suspect?",
        answer="An **instability** that built up along the way rather than one bad batch: "
        "optimizer state, weights that grew large, a schedule that raised the learning rate, "
        "or slowly spreading numerical damage. Lower the learning rate, add warmup or "
        "clipping, and watch the gradient and update norms leading up to the spike.",
        drills=("loss-spikes", "lr-sweep"),
    ),
    ReviewItem(
        key="bad-batch-or-instability",
        topic="optimizer",
        prompt="Which experiment tells a corrupt batch apart from an unstable optimiser when "
        "you see a spike?",
        answer="Reload a checkpoint from just before the spike and **replay** the suspect batch, "
        "then a normal batch. If the suspect batch spikes again from the same state and the "
        "normal one does not, the data is to blame. If the spike only happens along the "
        "original trajectory, suspect the optimisation itself.",
        drills=("loss-spikes",),
    ),
    ReviewItem(
        key="clipping-limits",
        topic="optimizer",
        prompt="Gradient clipping is switched on and a corrupt batch comes by. What does "
        "clipping change, and what does it leave as it was?",
        answer="It caps the size of the update that batch can cause, so the weights are not "
        "thrown far and training recovers quickly. The loss on that batch still spikes, "
        "because the batch is still bad: clipping contains the damage, it does not repair "
        "the data.",
        drills=("loss-spikes",),
    ),
    ReviewItem(
        key="scaler-skipped-steps",
        topic="optimizer",
        prompt="A loop moved to float16 autocast with a gradient scaler logs an ordinary loss "
        "at every step, but the loss no longer falls. How do you tell whether the scaler is "
        "skipping the steps?",
        answer="Keep a copy of the weights before `scaler.step(optimizer)` and compare: a step "
        "the scaler skipped leaves every weight **bit for bit** as it was. Log "
        "`scaler.get_scale()` too, since it halves after each skipped step (a gradient came "
        "out inf or NaN). A few skips at the start are the scale coming down to a level the "
        "gradients fit at; if most steps are skipped, the scale is far too large or something "
        "overflows float16 at every step, and the curve is flat however normal each logged "
        "value looks.",
        drills=("mixed-precision",),
    ),
    ReviewItem(
        key="unscale-before-clipping",
        topic="optimizer",
        prompt="With a gradient scaler, why must `scaler.unscale_(optimizer)` come before "
        "gradient clipping, and before logging a gradient norm?",
        answer="Until it runs, `.grad` holds the gradient **times the scale** (1024, 65536, "
        "...). A norm read then is that many times too large. Clipping it at norm 1 cuts it "
        "to norm 1, so once the scaler divides by the scale the step points the right way "
        "but is about 1/scale of its size, and the weights hardly move. Unscale first, then "
        "clip and log; a float32 copy taking the same step from the same weights shows the "
        "gap at once.",
        drills=("mixed-precision",),
    ),
)
