"""Review items: The loss and its masks."""

from drills.practice.review_item import ReviewItem

ITEMS: tuple[ReviewItem, ...] = (
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
    ReviewItem(
        key="accumulation-scaling",
        topic="loss",
        prompt="Gradients are accumulated over k micro-batches before each optimizer step, so "
        "that the step matches one batch k times larger. What has to happen to each "
        "micro-batch's loss, and what goes wrong if it does not?",
        answer="Divide it by **k** before its backward. Each micro-batch loss is already an "
        "average over its own examples, and backward adds into `.grad`, so k unscaled "
        "passes leave k times the big batch's gradient there: the right direction, k times "
        "too long. With plain SGD that is the same as a learning rate k times larger, which "
        "can blow the loss up at a large k while k = 1 trains fine.",
        drills=("gradient-accumulation",),
    ),
    ReviewItem(
        key="accumulation-check",
        topic="loss",
        prompt="How do you check that an accumulation loop takes the step one big batch "
        "would, and why is the loss curve not enough?",
        answer="From one set of weights, take the gradient of all k micro-batches joined into "
        "one batch and compare it with what accumulation left in `.grad`: the two should "
        "agree to float rounding, and the two updates should have a ratio of 1. A curve can "
        "look healthy while every step is k times too large, as long as k times the rate is "
        "still tolerable; it only shows the slip once k grows past that point.",
        drills=("gradient-accumulation",),
    ),
    ReviewItem(
        key="token-sum-logged",
        topic="loss",
        prompt="A language-model loop logs its batch loss as the token losses summed and divided "
        "by the number of sequences. Batches differ in length. What does the logged curve do, "
        "and what should the divisor be?",
        answer="The logged number is the per-token mean **times the tokens per sequence**, so "
        "it rises and falls with each batch's length: a batch of long documents reads several "
        "times higher though no token got worse, and curves from loaders with other lengths "
        "do not compare. Divide by the batch's count of **real, unmasked tokens** to log a "
        "per-token mean that means the same on every batch.",
        drills=("variable-length-loss",),
    ),
    ReviewItem(
        key="long-batch-spike",
        topic="loss",
        prompt="The training loss leaps on one step of every epoch and is back to normal on "
        "the next. How do you tell a batch that is only long from a batch that is broken?",
        answer="Put two numbers beside the leap: the batch's **count of real tokens** and its "
        "loss **per token**. If the batch is the epoch's longest and its per-token loss is "
        "ordinary, only the reduction made it leap (a sum, not a mean). If its per-token loss "
        "is high at an ordinary length, the examples themselves are suspect: decode them and "
        "check their labels.",
        drills=("variable-length-loss", "loss-spikes"),
    ),
    ReviewItem(
        key="attention-mask-vs-loss-mask",
        topic="loss",
        prompt="A padded batch needs two masks: one in the attention and one in the loss. What "
        "does each one keep out, and what does the run show when each is missing?",
        answer="The **attention mask** keeps padding out of what real tokens attend to: without "
        "it, a real token's output changes with how much padding its batch carries, so the "
        "same sequence scores differently in another batch (run it alone, unpadded, and "
        "compare). The **loss mask** keeps padding out of the average: without it the logged "
        "loss mixes in easy padding positions and falls as padding grows, while the loss on "
        "the real tokens does not move. One mask does not stand in for the other.",
        drills=("padding-masks",),
    ),
    ReviewItem(
        key="loss-fell-with-padding",
        topic="loss",
        prompt="After padding every batch to 512 instead of to its longest sequence, the training "
        "loss is several times lower. Has the model improved? How do you check in one step?",
        answer="Probably not. If padding positions are counted in the loss, the logged number "
        "is about the **real-token share** times the real tokens' loss plus the rest times the "
        "(tiny) padding loss, so more padding alone lowers it. Log the loss over the real "
        "tokens beside it, or ask autograd which positions the loss has a gradient for: only "
        "the real ones should.",
        drills=("padding-masks",),
    ),
)
