"""Review items: Evaluation, and curves where nothing is broken."""

from drills.practice.review_item import ReviewItem

ITEMS: tuple[ReviewItem, ...] = (
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
    ReviewItem(
        key="per-token-corpus-mean",
        topic="evaluation",
        prompt="An evaluation loop averages each batch's mean token loss. Why can its number "
        "move when only the collator changes, and which number does not?",
        answer="A mean of batch means gives every batch the **same weight** whatever its token "
        "count. When short sequences are harder per token and the batches differ in length, "
        "sorting the set by length before batching changes the weights and so the number, "
        "with the model untouched. The **per-token corpus mean**, every token's loss summed "
        "and divided by the number of tokens, does not depend on the batching at all.",
        drills=("variable-length-loss",),
    ),
    ReviewItem(
        key="encode-evaluation-like-training",
        topic="evaluation",
        prompt="A text model is right on nearly every training example and near chance on the "
        "evaluation set. Which cheap check tells whether the evaluation code feeds the model "
        "something different from what it trained on, and what would confirm it?",
        answer="Take a few evaluation examples and run them through **both** input paths, the "
        "training one and the evaluation one, then `decode()` the token ids back to text and "
        "put them side by side: a start token twice, a missing separator or words turned "
        "into the unknown token show at a glance. To confirm, score the **same** evaluation "
        "texts, same weights, with the training path's encoding: if the score comes back to "
        "what training promises, the encoding was the whole problem.",
        drills=("eval-pipeline-mismatch",),
    ),
    ReviewItem(
        key="evaluation-gap-three-causes",
        topic="evaluation",
        prompt="Evaluation accuracy is far below training accuracy. Name three different "
        "reasons, and the one measurement that singles out each.",
        answer="(1) The evaluation inputs are built differently (template, special tokens, "
        "normalisation): the same texts encoded the training way score well again. (2) The "
        "model memorised its training set: fresh examples drawn exactly like the training "
        "ones, encoded the same way, also score badly. (3) The evaluation data differ from "
        "the training data (new words, another source): both encodings agree, fresh "
        "training-like examples score well, only the evaluation set does not.",
        drills=("eval-pipeline-mismatch",),
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
    ReviewItem(
        key="noise-against-batch-size",
        topic="healthy",
        prompt="How does the spread of the logged batch loss change with the batch size B, "
        "and how would you check it on your own run?",
        answer="At fixed weights a batch's loss is the mean of B per-example losses, so it "
        "scatters with their standard deviation divided by **√B**: four times the batch, half "
        "the wobble. To check, freeze the weights, draw many batches of a few sizes, measure "
        "the standard deviation of their losses and plot it against B on log-log axes: the "
        "points fall on a line of slope **−1/2**.",
        drills=("batch-noise",),
    ),
    ReviewItem(
        key="spike-or-hard-example",
        topic="healthy",
        prompt="Trained one example per step, one step's loss is five times the average. "
        "What would tell you whether that is only noise or a broken batch?",
        answer="Compare the spike with what the training set itself can produce **at the same "
        "weights**: compute every example's loss there. At B = 1 the curve is just those "
        "per-example losses one after another, so a step up to the hardest example's loss is "
        "ordinary. A batch whose loss lies well above anything the set allows is broken: "
        "look at its raw examples. If instead the whole set's loss jumps after single "
        "steps, the updates are too large, not the batches.",
        drills=("batch-noise",),
    ),
)
