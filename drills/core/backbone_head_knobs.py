"""The size knobs of the drills built on the backbone + head classifier (break-the-graph,
optimizer-membership), read by drills/kit/backbone_head.py's BackboneHeadConfig.sized().
Torch-free and in core, not kit (kit is imported only by training code), so the
drills' descriptions can list them without loading torch."""

from __future__ import annotations

from drills.core.contract import Knob

SIZE_KNOBS = (
    Knob(
        "width",
        "int",
        32,
        "How many features the head reads (the backbone's first layer is twice as wide); "
        "the batch is the same whatever the width.",
        minimum=4,
        maximum=512,
    ),
    Knob("steps", "int", 200, "Full-batch Adam steps.", minimum=1, maximum=1000),
)
