"""The track's review items: questions a learner answers from memory, each with a model answer
and the drills whose runs show the answer.

Written for Drillbook from the track's study material (the study card's review prompt, the
diagnosis packet's flashcards, debugging sequence and curve cases), in our own words. A key is
stable: a learner's schedule and review log point at it, so a key is never renamed or reused;
an item that should go away is retired by the app, not deleted here.
"""

from __future__ import annotations

from dataclasses import dataclass

from drills.cases.contract import FAMILIES

# What an item is about: the packet's root-cause families (shared with the cases), plus the
# method itself (how to run a diagnosis, whatever the cause turns out to be).
TOPICS: dict[str, str] = {**FAMILIES, "method": "How to run a diagnosis"}


@dataclass(frozen=True)
class ReviewItem:
    key: str  # stable slug
    topic: str  # a key of TOPICS
    prompt: str  # the question, one or two sentences
    answer: str  # the model answer, Markdown, a few sentences
    drills: tuple[str, ...]  # slugs of the drills whose runs show it (the evidence to link)


class UnknownItem(KeyError):
    def __init__(self, key: str) -> None:
        super().__init__(f"unknown review item {key!r}")
        self.key = key

    def __str__(self) -> str:
        return str(self.args[0])


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
    # -- loss and masks ------------------------------------------------------------------------
    ReviewItem(
        key="broadcast-target",
        topic="loss",
        prompt="A regression target of shape `(N,)` is compared with a prediction of shape "
        "`(N, 1)` in a mean-squared error. What happens, and what does the curve show?",
        answer="Broadcasting turns the comparison into an N×N grid: every prediction is scored "
        "against every target. The best a model can do then is predict the mean target, so "
        "the loss levels off at about the **variance of the targets**. PyTorch may warn "
        "about the size mismatch; assert the shapes instead of relying on it.",
        drills=("overfit-one-batch",),
    ),
    ReviewItem(
        key="three-masks",
        topic="loss",
        prompt="A causal language model uses three different masks. Name them and say what "
        "each one controls.",
        answer="The **causal mask** stops a position from attending to later positions. The "
        "**attention (padding) mask** stops attention to padding. The **loss mask** decides "
        "which target tokens count towards the loss (e.g. only the response in supervised "
        "fine-tuning). They are separate decisions, and mixing them up gives different "
        "bugs.",
        drills=("double-shift-labels",),
    ),
    ReviewItem(
        key="double-shift",
        topic="loss",
        prompt="You shift the labels yourself and pass them to a model class that also shifts "
        "them internally. What does the training curve show?",
        answer="Each position is now trained to predict the token **two** places ahead. That is "
        "harder, so the loss settles at the higher two-step entropy of the data instead of "
        "the next-token entropy. Decoding a few input→label pairs makes the double offset "
        "obvious. Shift exactly once, in one place.",
        drills=("double-shift-labels",),
    ),
    ReviewItem(
        key="padding-in-loss",
        topic="loss",
        prompt="Padding tokens are accidentally counted in the loss. What happens to the "
        "reported loss, and to what the model learns?",
        answer="The reported loss drops, because padding is trivially predictable and dilutes "
        "the average, while the loss on real tokens is no better. Set padding labels to the "
        "ignore index (−100) and average over the number of valid target tokens.",
        drills=("double-shift-labels",),
    ),
    ReviewItem(
        key="prompt-dominated-loss",
        topic="loss",
        prompt="During fine-tuning the total loss falls nicely, yet the answers do not get "
        "better. What might the loss mask be doing?",
        answer="It may be counting the **prompt** tokens. They are many and easy to predict, so "
        "they dominate the average and pull it down while the loss on the response tokens "
        "stays flat. Mask the prompt out of the loss (or at least report the response-token "
        "loss on its own) when the response is what you care about.",
        drills=("double-shift-labels", "loss-vs-metric"),
    ),
    ReviewItem(
        key="no-supervised-tokens",
        topic="loss",
        prompt="Every label in a batch is masked out, and the loss is a mean. What happens, "
        "and how do you guard against it?",
        answer="The mean divides by zero valid tokens: 0/0 gives NaN, or a zero loss that "
        "trains nothing, depending on the code. Count the valid target tokens per batch and "
        "fail loudly when the count is zero, before the loss is computed.",
        drills=("overfit-one-batch", "double-shift-labels", "nan-hunt"),
    ),
    ReviewItem(
        key="mask-before-invalid",
        topic="loss",
        prompt="You divide by a count that can be zero and mask the bad entries afterwards. "
        "The forward pass is finite, yet the gradients are NaN. Why?",
        answer="The invalid division is still part of the graph. On the way back its local "
        "derivative is infinite, and infinity times the mask's zero is NaN. Guard the "
        "**inputs** of the operation (e.g. clamp the denominator, or select safe values with "
        "`torch.where` before dividing) rather than cleaning up its output.",
        drills=("nan-hunt",),
    ),
    ReviewItem(
        key="write-it-twice",
        topic="loss",
        prompt='What does "write it twice" mean for a vectorised masking or shifting '
        "function, and what does it catch?",
        answer="Keep a second, deliberately plain version written as loops over explicit "
        "indices, run a few inputs of different sizes through both, and require the results "
        "to agree (a unit test). It catches broadcasting, off-by-one and masking mistakes "
        "that a fast, clever version hides.",
        drills=("gradient-check",),
    ),
    # -- graph ---------------------------------------------------------------------------------
    ReviewItem(
        key="detach-between-layers",
        topic="graph",
        prompt="A `.detach()` slipped in between the backbone and the head. What do the "
        "parameters and the loss curve show?",
        answer="Every backbone parameter ends the backward pass with `grad` **None** and never "
        "changes; the head, downstream of the cut, still gets gradients and learns. The loss "
        "falls a little and then stalls at what the head can do with fixed random features. "
        "A NumPy round trip in the forward pass cuts the graph the same way.",
        drills=("break-the-graph",),
    ),
    ReviewItem(
        key="loss-from-item",
        topic="graph",
        prompt="What goes wrong when a loss is rebuilt from `loss.item()` (say, to rescale "
        "it), and how do you catch it?",
        answer="`.item()` returns a plain Python number; a tensor made from it has no history, "
        "so `backward()` either fails or reaches no parameter. Before the backward pass, "
        "check that the loss `requires_grad` and has a `grad_fn`.",
        drills=("break-the-graph",),
    ),
    ReviewItem(
        key="argmax-before-loss",
        topic="graph",
        prompt="Why can a loss computed from `argmax` predictions never train a model?",
        answer="`argmax` returns integer indices: there is no derivative through the choice of "
        "the largest entry, so the graph stops there and no gradient reaches the weights. "
        "Compute the loss on the logits (or probabilities) and keep `argmax` for metrics.",
        drills=("silent-no-learning",),
    ),
    # -- gradients -----------------------------------------------------------------------------
    ReviewItem(
        key="none-versus-zero-gradient",
        topic="gradients",
        prompt="After the backward pass, one parameter's `.grad` is `None` and another's is "
        "all zeros. What does each tell you?",
        answer="`None`: **no gradient was computed** — the parameter is not connected to the "
        "loss, was never used, or does not require gradients. Zeros: the parameter **is** in "
        "the graph, but the derivative came out zero for this batch (a dead ReLU, a masked "
        "path). The first is a wiring problem, the second a signal problem.",
        drills=("break-the-graph", "init-check"),
    ),
    ReviewItem(
        key="first-nonfinite",
        topic="gradients",
        prompt="The loss has become NaN. What should you do first?",
        answer="Find the **first** non-finite value instead of guessing from the last one. "
        "Check, in order: inputs and labels, activations and logits, the loss, the gradients "
        "(unscaled, if a gradient scaler is used) and the parameters after the step. Where "
        "it first appears names the mechanism; anomaly detection helps but is slow.",
        drills=("nan-hunt",),
    ),
    ReviewItem(
        key="dead-layer",
        topic="gradients",
        prompt="A layer that is clearly connected to the loss gets gradients that are exactly "
        "zero. How can that be?",
        answer="Its units are **dead**: every pre-activation is negative, so ReLU outputs zero "
        "and passes back zero gradient for every example. A large negative bias, a bad "
        "initialisation or one oversized step can cause it. The gradient is not `None`, "
        "since the layer is in the graph; it just carries no signal.",
        drills=("init-check",),
    ),
    ReviewItem(
        key="uniform-language-model",
        topic="gradients",
        prompt="A language model trained from scratch on a 50,000-token vocabulary sits at a "
        "loss of about 10.8. What does that number tell you?",
        answer="ln 50,000 ≈ 10.82: the model still predicts **every token as equally likely**. "
        "It has learned nothing yet. Look at the output layer first: does any gradient reach "
        "it, and do its weights differ from one step to the next?",
        drills=("init-check",),
    ),
    ReviewItem(
        key="finite-differences",
        topic="gradients",
        prompt="How do you check a backward pass you wrote by hand?",
        answer="Compare it with **finite differences**: nudge each input by a small ε in both "
        "directions, take the change in the output over 2ε, and compare with the analytic "
        "gradient, in double precision on small inputs (`torch.autograd.gradcheck` does "
        "this). A mismatch on some inputs only (one sign, one branch) points at the faulty "
        "part of the formula.",
        drills=("gradient-check",),
    ),
    ReviewItem(
        key="softmax-gradient",
        topic="gradients",
        prompt="What is the gradient of softmax cross-entropy with respect to the logits, and "
        "what does it do to each logit?",
        answer="It is **p − one-hot(y)**. The correct class's logit gets a negative gradient "
        "(p_y − 1), so gradient descent raises it; every other logit gets its own "
        "probability as gradient and is lowered, the more so the more probability it holds. "
        "Confidently wrong classes are pushed down hardest.",
        drills=("init-check", "overfit-one-batch"),
    ),
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
    # -- evaluation ----------------------------------------------------------------------------
    ReviewItem(
        key="eval-versus-no-grad",
        topic="evaluation",
        prompt="Why can `model.eval()` not replace `torch.no_grad()`, nor the other way round?",
        answer="They change different things. `eval()` switches layer **behaviour** (dropout "
        "off, batch norm using its running statistics). `no_grad()` stops **recording the "
        "graph**, which saves memory and time. Evaluation normally wants both; using only "
        "one leaves either noisy numbers or wasted memory.",
        drills=("val-below-train", "break-the-graph"),
    ),
    ReviewItem(
        key="train-eval-loss",
        topic="evaluation",
        prompt="Validation loss is below training loss. Which one measurement tells you "
        "whether dropout or an easier validation set is behind it?",
        answer="Recompute the **training set's loss in `eval()` mode** with exactly the "
        "validation code. If the online training loss is above it and it matches validation, "
        "dropout, augmentation or timing explain the gap. If it stays above validation, the "
        "validation set really is easier (or contaminated), and the split deserves a look.",
        drills=("val-below-train",),
    ),
    ReviewItem(
        key="loss-improves-accuracy-flat",
        topic="evaluation",
        prompt="How can cross-entropy keep improving while accuracy does not change at all?",
        answer="Cross-entropy reacts to every shift in probability; accuracy only changes when "
        "the top class changes. A correct example becoming more confident lowers the loss "
        "and leaves accuracy alone, and so does a wrong example whose correct class gains "
        "but is still not on top.",
        drills=("loss-vs-metric",),
    ),
    ReviewItem(
        key="token-loss-exact-match",
        topic="evaluation",
        prompt="A language model's token loss falls, but exact match on its answers stays "
        "flat. Give two reasons.",
        answer="Exact match needs **every** token right: at 95% per token, a ten-token answer "
        "is fully right only about 60% of the time. And the average can drop thanks to tokens "
        "that were never in doubt (common words, the prompt) while the handful that decide "
        "the answer stay wrong. Scoring with the true previous token fed in (teacher forcing) "
        "can also flatter a model whose own generated answers do not improve.",
        drills=("loss-vs-metric",),
    ),
    ReviewItem(
        key="majority-class-accuracy",
        topic="evaluation",
        prompt="A classifier reaches 95% accuracy on data where one class makes up 5%. What "
        "do you check before celebrating?",
        answer="Always predicting the majority class also scores 95%. Look at **recall per "
        "class** and the confusion matrix: a minority recall near zero means the model "
        "learned the class frequencies, not the task. Judge small differences against the "
        "standard error of the evaluation set.",
        drills=("loss-vs-metric",),
    ),
    # -- nothing broken ------------------------------------------------------------------------
    ReviewItem(
        key="validation-below-training",
        topic="healthy",
        prompt="Give reasons why validation loss can sit below training loss with nothing broken.",
        answer="Dropout or augmentation act only in training and make its loss pessimistic; "
        "the training loss may include a regularisation term; the training loss is "
        "averaged over an epoch of older weights, while validation uses the weights at its "
        "end; or the validation set is simply easier. None of these needs a fix, and "
        "recomputing the training loss in `eval()` mode shows which one is at work.",
        drills=("val-below-train",),
    ),
    ReviewItem(
        key="rising-validation",
        topic="healthy",
        prompt="Training loss keeps falling while validation loss turns upward. What is your "
        "leading hypothesis, what do you check before acting, and which checkpoint do you "
        "keep?",
        answer="If the two losses are comparable, **overfitting**: the model is learning "
        "quirks of its training set. First audit the split (duplicates, the same source on "
        "both sides, a shifted distribution). Keep the checkpoint at the **lowest "
        "validation loss**, then try more data, stronger regularisation or a smaller model.",
        drills=("overfitting-leakage",),
    ),
)


def all_items() -> tuple[ReviewItem, ...]:
    return ITEMS


def get_item(key: str) -> ReviewItem:
    for item in ITEMS:
        if item.key == key:
            return item
    raise UnknownItem(key)
