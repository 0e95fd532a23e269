import pytest

from drills.core.registry import UnknownDrill, all_drills, get_drill


def test_get_drill_finds_each_listed_drill() -> None:
    for drill in all_drills():
        assert get_drill(drill.slug) is drill


def test_unknown_drill_names_the_slug_and_the_known_ones() -> None:
    with pytest.raises(UnknownDrill) as caught:
        get_drill("nope")
    assert isinstance(caught.value, KeyError)
    known = ", ".join(drill.slug for drill in all_drills())
    assert str(caught.value) == f"unknown drill 'nope' (known: {known})"
    assert known.startswith("overfit-one-batch, ")


@pytest.mark.parametrize("drill", all_drills(), ids=lambda drill: drill.slug)
def test_each_drill_is_consistent(drill: object) -> None:
    from drills.core.contract import Drill

    assert isinstance(drill, Drill)
    assert drill.version and drill.summary and drill.symptom and drill.scenario
    hypothesis_keys = [hypothesis.key for hypothesis in drill.hypotheses]
    assert len(hypothesis_keys) == len(set(hypothesis_keys))
    for knob in drill.knobs:
        if knob.choices is not None:
            assert knob.default in knob.choices
