"""Hidden-bug runs of a drill: the setup is drawn for the learner, who predicts before anything
names it.

On a drill's page a learner may pick the bug themselves (exploration) or ask for it to be
hidden: then the variant is drawn from the drill's case-set causes (the healthy reading among
them where the set has one), with the set's nuisance settings and a seed, just as a curve round
draws one (drills/practice/rounds.py). The knobs are shown with the result, not before.

The draw is keyed with a server secret: without it, a learner who knows their id and how many
hidden runs they made could work out which setup comes next.
"""

from __future__ import annotations

import hashlib
import hmac
import random

from drills.core.knobs import resolve_knobs
from drills.core.registry import get_drill
from drills.practice.rounds import SEED_RANGE, RoundDraw, RoundVariant, all_variants


def variants_of(drill_slug: str) -> tuple[RoundVariant, ...]:
    """The setups a hidden-bug run of the drill may draw, sorted by key."""
    return tuple(variant for variant in all_variants() if variant.drill == drill_slug)


def draw_hidden_setup(drill_slug: str, learner_id: int, number: int, *, key: bytes) -> RoundDraw:
    """The learner's `number`-th hidden-bug run of the drill: the same inputs, the same draw."""
    variants = variants_of(drill_slug)
    if not variants:
        raise LookupError(f"drill {drill_slug!r} has no setups to hide (no case set)")
    message = f"hidden-setup\x00{drill_slug}\x00{learner_id}\x00{number}".encode()
    digest = hmac.new(key, message, hashlib.sha256).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    variant = rng.choice(variants)
    seed = rng.randrange(SEED_RANGE)
    nuisance = {name: rng.choice(variant.nuisance[name]) for name in sorted(variant.nuisance)}
    knobs = resolve_knobs(get_drill(drill_slug), {**variant.base, **nuisance, **variant.knobs})
    return RoundDraw(variant=variant, seed=seed, knobs=knobs)
