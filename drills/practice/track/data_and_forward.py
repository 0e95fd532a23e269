"""Review items: Data and targets, and the forward pass."""

from drills.practice.review_item import ReviewItem

ITEMS: tuple[ReviewItem, ...] = (
    # -- data and targets ----------------------------------------------------------------------
    ReviewItem(
        key="two-data-bugs-first",
        topic="data",
        prompt="Training loss stays high on a single batch of eight examples. Name two data "
        "problems to rule out before you touch the architecture.",
        answer="For example: labels that no longer belong to their inputs (shuffled, "
        "misaligned or mapped to the wrong class ids), a target whose shape differs from the "
        "prediction's, a broken tokenizer, or masks that leave only padding to supervise. "
        "Decode a few input/label pairs and print the shapes before anything else.",
        drills=("overfit-one-batch",),
    ),
    ReviewItem(
        key="shuffled-labels-floor",
        topic="data",
        prompt="While overfitting one batch, the labels get reshuffled every step. Where does "
        "the loss level off, and why there?",
        answer="At the **entropy of the batch's labels** (about ln C for C balanced classes). "
        "The inputs no longer say anything about the label, so the best the model can do is "
        "predict how often each label occurs. A plateau at that value is a strong hint that "
        "inputs and labels have come apart.",
        drills=("overfit-one-batch",),
    ),
    ReviewItem(
        key="randomness-when-overfitting",
        topic="data",
        prompt="Why should dropout, augmentation and other randomness be off (or reseeded "
        "identically each step) when you try to overfit one batch?",
        answer="Memorising needs the same inputs and the same network every step. With "
        "randomness on, each step sees a slightly different problem, so the loss cannot go "
        "to zero and settles on a noisy floor, and you cannot tell that floor from a real "
        "bug. Fix the randomness, then check by logging that two steps really see equal "
        "inputs.",
        drills=("overfit-one-batch",),
    ),
    ReviewItem(
        key="fixed-batch-written-into",
        topic="data",
        prompt="Your overfit check reuses one batch dict at every step, and its loss goes to "
        "zero. How could every step still have trained on a different batch, and how do you "
        "find out?",
        answer="Code that edits the dict's tensors **in place** changes the batch the next "
        "step reads: `x = batch['features']` is not a copy, so `x += noise`, a normalisation "
        "with `sub_` or `div_`, or a label fix written back all pile up from step to step. A "
        "small model can keep up with a batch that moves a little each step, so the curve "
        "looks healthy. Keep a clone of the first step's batch and compare every later one "
        "with it using `torch.equal`, key by key; copy with `.clone()` before editing.",
        drills=("overfit-one-batch",),
    ),
    ReviewItem(
        key="reseeded-overfit-memorises-one-draw",
        topic="data",
        prompt="You reset the seed before each step, so dropout and augmentation repeat, and "
        "the overfit loss reaches zero. What exactly did the model memorise, and what is "
        "still unchecked?",
        answer="It memorised **one draw**: the same noisy inputs seen through the same "
        "dropout masks at every step. That shows the loop can memorise, and the run can be "
        "repeated number for number. It does not show the clean batch is fitted: in the "
        "drill the same weights in eval mode on the clean inputs score between 0.1 and 1.7 "
        "nats. Confirm the reseeding works by comparing two steps' inputs bit for bit, and "
        "measure in eval mode when you need the batch's own loss.",
        drills=("overfit-one-batch",),
    ),
    ReviewItem(
        key="spike-every-epoch",
        topic="data",
        prompt="The loss jumps at the same position in every epoch. What do you suspect, and "
        "what do you inspect?",
        answer="Something tied to the **order of the data** rather than to the optimiser: the "
        "batch (or shard) that arrives at that position, how the data is ordered, or a "
        "scheduled event such as a learning-rate change at that step. Look at the raw "
        "examples of that batch and replay it from a checkpoint taken just before.",
        drills=("loss-spikes",),
    ),
    ReviewItem(
        key="leakage-is-optimistic",
        topic="data",
        prompt="Copies of validation examples slipped into the training set. Does that produce "
        "the classic curve where validation loss turns upward?",
        answer="No. Leakage makes validation look **too good**: the model has seen those "
        "examples, so the validation curve follows the training curve and hides any "
        "overfitting. Find it with a split audit (exact and near duplicates, the same "
        "document or user on both sides) and with a clean held-out set, which then sits "
        "clearly above the leaked validation set.",
        drills=("overfitting-leakage",),
    ),
    # -- forward pass --------------------------------------------------------------------------
    ReviewItem(
        key="loss-at-step-zero",
        topic="forward",
        prompt="What loss should a freshly initialised classifier over C classes report at "
        "step 0, and what does a much larger value tell you?",
        answer="About **ln C**, the loss of a uniform guess. A value far above it means the "
        "untrained model is confidently wrong: its logits are too large, usually because "
        "the weights were initialised too big, and the softmax is saturated. Checking step "
        "0 against ln C costs nothing and catches this before any training.",
        drills=("init-check",),
    ),
    ReviewItem(
        key="manual-log-softmax",
        topic="forward",
        prompt="Why is taking `log(softmax(logits))` in two separate steps a bad idea, and what "
        "should you use instead?",
        answer="A small probability can round to exactly 0 in floating point, and its log is "
        "then −∞, which turns the loss or its gradients into NaN. `log_softmax` (or a "
        "cross-entropy that takes logits) computes the same quantity with the log-sum-exp "
        "trick and never forms the tiny probability.",
        drills=("nan-hunt",),
    ),
    ReviewItem(
        key="loss-near-zero-too-soon",
        topic="forward",
        prompt="A tiny causal language model reaches almost zero loss within a few steps on "
        "text with a known, non-zero entropy. Which two bugs would let it do that?",
        answer="Either the labels were **not shifted**, so the model is asked to predict the "
        "token it is reading and simply copies it, or the **causal mask is missing**, so "
        "each position can look at the token it is meant to predict. A probe separates "
        "them: change a later token and see whether earlier predictions move.",
        drills=("double-shift-labels",),
    ),
    ReviewItem(
        key="exact-audit-passes-group-leak",
        topic="data",
        prompt="Reviews were split at random into training and validation, and a search for "
        "identical rows across the two found none. Why can validation still flatter the model, "
        "and which audit would show it?",
        answer="Each user wrote several reviews, so a random split puts most users on **both "
        "sides**. The model learns each writer's own habit from their training reviews and "
        "gets it right on their validation ones, which it will not be able to do for a new "
        "user. No row is repeated, so an identical-row search finds nothing; counting the "
        "validation rows whose **user** also appears in training does. Split by user (or "
        "document, or patient) so that each one lands on one side only.",
        drills=("group-leakage",),
    ),
    ReviewItem(
        key="near-copies-survive-a-group-split",
        topic="data",
        prompt="The split already keeps every user on one side, yet validation still beats "
        "users the model never met. What kind of overlap can a split by user miss, and how "
        "do you find it?",
        answer="**Near copies** filed under a different id: the same text posted again from "
        "another account, a document re-uploaded with new whitespace. They differ in a few "
        "bytes or decimals, so neither an exact match nor the user id catches them. Normalise "
        "before comparing (case, whitespace, rounding of features) or look for a training row "
        "**within a small distance** of each validation row, then drop or group those copies.",
        drills=("group-leakage",),
    ),
    ReviewItem(
        key="how-much-leakage-flatters",
        topic="data",
        prompt="A quarter of the validation rows share a user with training. About how much "
        "better than the truth does the validation loss look, and what honest number do you "
        "compare it with?",
        answer="Roughly **that share of the gap** between a row of an unknown user and a row "
        "of a known one: the flagged rows score like known users, the rest like new ones. "
        "Measure the honest number on users who appear in neither set (or on a split by "
        "user); the difference from validation should be about the flagged share times that "
        "gap, up to chance counted per user, not per row.",
        drills=("group-leakage",),
    ),
)
