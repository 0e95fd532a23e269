"""Write it: the finder of the first non-finite value of one training step. Given a model, a
batch and the loss function, it runs the forward pass, the loss and the backward pass, and names
the stage and the module (by its dotted name from named_modules()) where a NaN or inf first
appears, or None when all of it is finite. The hidden runs plant one fault each at a depth the
seed picks (an infinite weight, the log of negatives, a division by a spread of zero, an exp
that overflows, a fault a later module hides, a loss that overflows, a NaN only in the
backward) and one is healthy; the finder must also remove its hooks and change no weight."""

from drills.exercises.contract import CheckSpec, Exercise, exercise_files

EXERCISE = Exercise(
    slug="first-non-finite",
    drill="nan-hunt",
    title="Hunt the NaN: name the first module that goes non-finite",
    kind="write",
    **exercise_files(__file__),
    hints=(
        "The model's final output only tells you that something went wrong, not where. You "
        "need to see every module's output as it is made, in order, and then the gradients as "
        "the backward pass makes them: torch lets you attach a function to a module for each.",
        "register_forward_hook(fn) calls fn(module, inputs, output) after each module's "
        "forward; register_full_backward_hook(fn) calls fn(module, grad_input, grad_output) as "
        "the backward leaves it. Map each module to its name from named_modules() first, keep "
        "the first non-finite one, and keep the handles: each has a .remove().",
        "names = {m: n for n, m in model.named_modules()}. Register both hooks on every "
        "module, appending names[m] when not torch.isfinite(t).all() for a tensor of the "
        "output (forward) or of grad_input (backward; skip None). In try/finally: loss = "
        "loss_fn(model(inputs)); a forward hit first -> ('forward', it); a non-finite loss "
        "-> ('loss', None); else loss.backward() and a backward hit -> ('backward', it); else "
        "None. In finally, remove every handle.",
    ),
    provides=("first_non_finite",),
    harness=f"{__name__}.harness",
    checker=f"{__name__}.checks",
    checks=(
        CheckSpec("weights", "The model's weights come back (every tensor, in its layout)"),
        CheckSpec("healthy", "On a model whose every value is finite it returns None"),
        CheckSpec(
            "forward",
            "It names the first module whose output holds NaN or inf, wherever the fault sits",
        ),
        CheckSpec(
            "hidden-forward",
            "It finds a non-finite output even when a later module makes the final output finite",
        ),
        CheckSpec("loss", "When every output is finite and the loss is not, it names the loss"),
        CheckSpec(
            "backward",
            "When the forward pass and the loss are finite, it names the module whose backward "
            "first sends a non-finite gradient toward its input",
        ),
        CheckSpec("names", "It names modules by their dotted names from model.named_modules()"),
        CheckSpec("hooks-removed", "No hook it registered is left on the model afterwards"),
        CheckSpec("leaves-model-alone", "It changes no weight"),
    ),
    cases=(
        "healthy model",
        "an infinite weight",
        "a log of negatives",
        "a division by zero",
        "an exp that overflows",
        "a fault hidden downstream",
        "a loss that overflows",
        "NaN only in the backward",
    ),
)
