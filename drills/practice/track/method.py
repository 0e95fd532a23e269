"""Review items about how to run a diagnosis: the order in which to look."""

from drills.practice.review_item import ReviewItem

ITEMS: tuple[ReviewItem, ...] = (
    # -- method: the order in which to look --------------------------------------------------
    ReviewItem(
        key="fastest-wiring-check",
        topic="method",
        prompt="What is the quickest way to learn whether a training loop is wired up "
        "correctly, and what result do you expect from it?",
        answer="Train on **one small batch that never changes** (a few examples, randomness "
        "off) for a few hundred steps. Any model with reasonable capacity can memorise a "
        "handful of examples, so the loss should head to about zero. If it does not, the "
        "fault is in the pipeline (targets, loss, graph, gradients or optimizer), not in the "
        "size of the model.",
        drills=("overfit-one-batch",),
    ),
    ReviewItem(
        key="cannot-fit-one-batch",
        topic="method",
        prompt="Your model cannot even fit one small batch, and a colleague suggests making it "
        "bigger. Why is that premature, and what do you inspect instead?",
        answer="A few examples are memorisable by almost any network, so failing here says "
        "the **machinery** is broken, not that capacity is short. Look at whether inputs and "
        "labels line up, what the masks leave to supervise, whether the loss has a graph, "
        "whether gradients reach every parameter, whether the optimizer holds those "
        "parameters with a non-zero learning rate, and whether the weights actually change "
        "after a step.",
        drills=("overfit-one-batch", "silent-no-learning"),
    ),
    ReviewItem(
        key="fits-batch-not-dataset",
        topic="method",
        prompt="The model drives one batch to near-zero loss but does badly on the full "
        "dataset. What does that rule out, and what is left?",
        answer="The loop itself works: data reaches the loss, gradients flow and the optimizer "
        "moves the weights. What remains are problems of scale: too little capacity, too "
        "much regularisation, noisy or genuinely hard data, or an optimisation setting "
        "(learning rate, schedule, batch size) that does not carry over to the whole set.",
        drills=("overfit-one-batch", "overfitting-leakage"),
    ),
    ReviewItem(
        key="diagnostic-stack",
        topic="method",
        prompt="List, in the order a training step passes through them, the places a "
        "training failure can come from.",
        answer="1. the data and targets, 2. the forward pass, 3. the loss and its masks, "
        "4. the link from the loss back to the parameters (the autograd graph), 5. the "
        "gradients themselves (missing, zero, non-finite), 6. the optimizer and which "
        "parameters it updates, 7. evaluation and logging, which can mislead even when "
        "training is fine. Walking this list keeps a diagnosis from jumping to the first "
        "familiar story.",
        drills=("silent-no-learning", "overfit-one-batch"),
    ),
    ReviewItem(
        key="five-part-diagnosis",
        topic="method",
        prompt="When you diagnose a curve out loud, which five things should your answer contain?",
        answer="A **leading hypothesis**; the **alternatives** that would produce a similar "
        "curve; the **first test** that tells them apart (ideally the cheapest); the "
        "**intervention** you expect to need; and the **evidence** that would show the "
        "intervention worked (which number should change, and how). Naming all five keeps "
        'an answer from stopping at a label such as "overfitting".',
        drills=("overfitting-leakage", "loss-spikes"),
    ),
    ReviewItem(
        key="comparable-curves",
        topic="method",
        prompt="Before you read anything into a gap between the training and validation "
        "curves, what must you confirm about the two numbers?",
        answer="That they measure the same thing: the same loss and reduction (a sum is not a "
        "mean; per token is not per sequence), the same masks, the same model mode "
        "(`eval()` for both if you compare), the same checkpoint and timing, no extra "
        "regularisation term in one of them, and comparable smoothing. Otherwise the gap "
        "may be bookkeeping rather than behaviour.",
        drills=("val-below-train", "double-shift-labels"),
    ),
)
