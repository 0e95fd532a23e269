"""Hidden-bug runs draw their setup from the drill's case-set causes (drills/practice/
hidden_setups.py): every drill has some to draw, healthy ones among them where its set has one,
and the draw is fixed by (drill, learner, number, key) and by nothing a learner can compute."""

from collections import Counter

import pytest

from drills.cases.registry import all_case_sets
from drills.core.knobs import resolve_knobs
from drills.core.registry import all_drills, get_drill
from drills.practice.hidden_setups import draw_hidden_setup, variants_of

KEY = b"a server secret"
DRILLS = [drill.slug for drill in all_drills()]


@pytest.mark.parametrize("slug", DRILLS)
def test_every_drill_hides_several_setups_with_distinct_verdicts(slug: str) -> None:
    variants = variants_of(slug)
    assert {variant.drill for variant in variants} == {slug}
    assert len({variant.diagnosis for variant in variants}) >= 2, slug
    healthy = get_drill(slug).healthy
    causes = [
        cause for case_set in all_case_sets() if case_set.drill == slug for cause in case_set.causes
    ]
    if any(cause.family == "healthy" for cause in causes):
        assert any(variant.family == "healthy" for variant in variants)
        assert healthy is None or healthy in {variant.diagnosis for variant in variants}


def test_the_same_inputs_draw_the_same_setup_and_the_key_changes_it() -> None:
    slug = "overfit-one-batch"
    first = draw_hidden_setup(slug, 7, 1, key=KEY)
    assert draw_hidden_setup(slug, 7, 1, key=KEY) == first
    others = [draw_hidden_setup(slug, 7, 1, key=bytes([n])) for n in range(20)]
    assert any(other.as_dict() != first.as_dict() for other in others)
    # The drawn knobs are every knob of the drill, resolved: what the run and its command use.
    drill = get_drill(slug)
    assert first.knobs == resolve_knobs(drill, first.knobs)
    assert set(first.knobs) == {knob.name for knob in drill.knobs}


@pytest.mark.parametrize("slug", DRILLS)
def test_a_learners_runs_meet_every_setup_of_the_drill(slug: str) -> None:
    drawn = Counter(draw_hidden_setup(slug, 3, n, key=KEY).variant.key for n in range(1, 301))
    assert set(drawn) == {variant.key for variant in variants_of(slug)}
    # Runs of one learner differ from run to run, and from another learner's.
    assert len({draw_hidden_setup(slug, 3, n, key=KEY).seed for n in range(1, 21)}) == 20
    assert draw_hidden_setup(slug, 3, 1, key=KEY) != draw_hidden_setup(slug, 4, 1, key=KEY)


def test_a_drill_without_setups_to_hide_says_so() -> None:
    with pytest.raises(LookupError, match="no setups to hide"):
        draw_hidden_setup("no-such-drill", 1, 1, key=KEY)
