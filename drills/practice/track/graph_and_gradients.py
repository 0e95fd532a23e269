"""Review items: The autograd graph, and the gradients it carries."""

from drills.practice.review_item import ReviewItem

ITEMS: tuple[ReviewItem, ...] = (
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
)
