import math

import pytest
import torch

from drills.kit.causal_lm import (
    IGNORE,
    LABEL_MODES,
    CausalTransformer,
    MarkovSource,
    ModelConfig,
    SourceConfig,
    TextBatch,
    build_targets,
    build_targets_loop,
    conditional_entropy,
    decode_token,
    entropy_references,
    label_shift,
)

CONFIG = SourceConfig()


def source_and_batch(seed: int, count: int = 8) -> tuple[MarkovSource, TextBatch]:
    generator = torch.Generator().manual_seed(seed)
    source = MarkovSource(CONFIG, generator)
    return source, source.sample(count, generator)


def random_batch(seed: int) -> TextBatch:
    """Arbitrary tokens and masks, not only the layouts the source makes."""
    generator = torch.Generator().manual_seed(seed)
    shape = (5, 11)
    tokens = torch.randint(CONFIG.vocab, shape, generator=generator)
    is_prompt = torch.rand(shape, generator=generator) < 0.3
    is_pad = (torch.rand(shape, generator=generator) < 0.3) & ~is_prompt
    return TextBatch(tokens, is_prompt, is_pad, torch.zeros(5, dtype=torch.int64))


@pytest.mark.parametrize("seed", range(3))
def test_sequences_are_prompt_then_response_then_padding(seed: int) -> None:
    source, batch = source_and_batch(seed, count=64)
    p = CONFIG.prompt_length
    for row, length in zip(batch.tokens.tolist(), batch.response_lengths.tolist(), strict=True):
        prompt, response, padding = row[:p], row[p : p + length], row[p + length :]
        start = prompt[0] - CONFIG.prompt_base
        # The prompt counts a, b, c… from its first letter, which also sets the length.
        assert prompt == [CONFIG.prompt_base + (start + i) % 8 for i in range(p)]
        assert length == CONFIG.min_response + start
        assert len(padding) >= 3 and set(padding) == {CONFIG.pad}
        assert response[0] in source.entry[prompt[-1] - CONFIG.prompt_base].tolist()
        for previous, letter in zip(response, response[1:], strict=False):
            assert letter in source.successors[previous].tolist()
    assert batch.is_pad.tolist() == (batch.tokens == CONFIG.pad).tolist()
    assert batch.is_prompt[:, :p].all() and not batch.is_prompt[:, p:].any()


def test_each_letter_has_two_distinct_successors_and_two_predecessors() -> None:
    source, _ = source_and_batch(0)
    assert bool((source.successors[:, 0] != source.successors[:, 1]).all())
    predecessors = source.successors.flatten().bincount(minlength=CONFIG.response_symbols)
    assert predecessors.tolist() == [2] * CONFIG.response_symbols
    assert sorted(source.entry.flatten().tolist()) == list(range(CONFIG.response_symbols))


def test_both_successors_are_equally_likely() -> None:
    source, batch = source_and_batch(0, count=2000)
    p = CONFIG.prompt_length
    picks_first, transitions = 0, 0
    for row, length in zip(batch.tokens.tolist(), batch.response_lengths.tolist(), strict=True):
        response = row[p : p + length]
        for previous, letter in zip(response, response[1:], strict=False):
            picks_first += letter == int(source.successors[previous, 0])
            transitions += 1
    assert picks_first / transitions == pytest.approx(0.5, abs=0.01)


@pytest.mark.parametrize("seed", range(3))
def test_entropy_references_follow_the_transition_matrix(seed: int) -> None:
    source, _ = source_and_batch(seed)
    next_token, two_step = entropy_references(source)
    assert next_token == pytest.approx(math.log(2), abs=1e-12)
    assert math.log(2) < two_step <= math.log(4) + 1e-12


def test_two_step_entropy_is_ln4_without_collisions_and_lower_with_them() -> None:
    letters = 8
    # t -> 2t, 2t+1 (mod 8): the four two-step destinations 4t..4t+3 never collide.
    spread = torch.zeros(letters, letters, dtype=torch.float64)
    for t in range(letters):
        spread[t, (2 * t) % letters] = spread[t, (2 * t + 1) % letters] = 0.5
    assert conditional_entropy(spread @ spread) == pytest.approx(math.log(4))
    # t -> t+1, t+2: t+2 is reachable two ways, so two steps ahead is more predictable.
    overlapping = torch.zeros(letters, letters, dtype=torch.float64)
    for t in range(letters):
        overlapping[t, (t + 1) % letters] = overlapping[t, (t + 2) % letters] = 0.5
    expected = -(0.25 * math.log(0.25) * 2 + 0.5 * math.log(0.5))
    assert conditional_entropy(overlapping @ overlapping) == pytest.approx(expected)


def test_label_shift_per_mode() -> None:
    shifts = {mode: label_shift(mode) for mode in LABEL_MODES}
    assert shifts == {
        "shift-once": 1,
        "shift-twice": 2,
        "no-shift": 0,
        "pad-in-loss": 1,
        "all-masked": 1,
        "prompt-in-loss": 1,
    }
    with pytest.raises(ValueError, match="shift-thrice"):
        label_shift("shift-thrice")


@pytest.mark.parametrize("mode", LABEL_MODES)
@pytest.mark.parametrize("seed", range(4))
def test_vectorised_targets_match_the_loop(mode: str, seed: int) -> None:
    _, batch = source_and_batch(seed)
    assert build_targets(batch, mode).tolist() == build_targets_loop(batch, mode)
    arbitrary = random_batch(seed)
    assert build_targets(arbitrary, mode).tolist() == build_targets_loop(arbitrary, mode)


def test_targets_point_where_each_mode_says() -> None:
    _, batch = source_and_batch(0)
    tokens = batch.tokens
    response = ~batch.is_prompt & ~batch.is_pad
    once = build_targets(batch, "shift-once")
    counted = once != IGNORE
    assert torch.equal(once[:, :-1][counted[:, :-1]], tokens[:, 1:][counted[:, :-1]])
    assert torch.equal(counted[:, :-1], response[:, 1:])  # response targets only
    twice = build_targets(batch, "shift-twice")
    assert torch.equal(twice[:, :-2], once[:, 1:-1])  # one more position ahead
    same = build_targets(batch, "no-shift")
    assert torch.equal(same[response], tokens[response])
    assert int((build_targets(batch, "all-masked") != IGNORE).sum()) == 0
    with_pad = build_targets(batch, "pad-in-loss")
    assert int((with_pad == CONFIG.pad).sum()) == int(batch.is_pad[:, 1:].sum())
    with_prompt = build_targets(batch, "prompt-in-loss")
    assert int((with_prompt >= CONFIG.prompt_base).sum()) == 8 * (CONFIG.prompt_length - 1)


def test_the_model_only_looks_back() -> None:
    torch.manual_seed(0)
    model = CausalTransformer(ModelConfig(vocab=CONFIG.vocab, seq_len=CONFIG.seq_len))
    _, batch = source_and_batch(0, count=2)
    changed = batch.tokens.clone()
    changed[:, 20:] = (changed[:, 20:] + 1) % CONFIG.vocab
    with torch.no_grad():
        before, after = model(batch.tokens), model(changed)
    assert before.shape == (2, CONFIG.seq_len, CONFIG.vocab)
    assert torch.equal(before[:, :20], after[:, :20])
    assert not torch.equal(before[:, 20:], after[:, 20:])


def test_decode_token() -> None:
    decoded = [decode_token(t, CONFIG) for t in (0, 15, CONFIG.prompt_base, CONFIG.pad, IGNORE)]
    assert decoded == ["A", "P", "a", "·PAD·", "·ignored·"]


def test_without_the_causal_mask_the_model_also_looks_ahead() -> None:
    _, batch = source_and_batch(0, count=2)
    changed = batch.tokens.clone()
    changed[:, 20:] = (changed[:, 20:] + 1) % CONFIG.vocab
    models = {}
    for causal in (True, False):
        torch.manual_seed(0)
        config = ModelConfig(vocab=CONFIG.vocab, seq_len=CONFIG.seq_len, causal=causal)
        models[causal] = CausalTransformer(config)
    # The switch adds no parameter: both models start from the same weights.
    for (name, a), (_, b) in zip(
        models[True].named_parameters(), models[False].named_parameters(), strict=True
    ):
        assert torch.equal(a, b), name
    with torch.no_grad():
        before, after = models[False](batch.tokens), models[False](changed)
    assert not torch.equal(before[:, :20], after[:, :20])  # the past sees the changed future
