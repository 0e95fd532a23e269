import math

import pytest
import torch
import torch.nn.functional as F

from drills.kit.synthetic_classification import (
    InputNoise,
    LabelledSet,
    TeacherTask,
    build_mlp,
    concat_sets,
    decoded_examples,
    draw_set,
    first_examples,
    make_teacher,
    mean_loss,
    noise_floor,
    sets_digest,
)

TASK = TeacherTask(features=8, classes=4, sharpness=6.0)


def draw(seed: int, examples: int = 64, task: TeacherTask = TASK) -> LabelledSet:
    generator = torch.Generator().manual_seed(seed)
    teacher = make_teacher(task, generator)
    return draw_set(task, teacher, examples, generator)


def test_a_set_depends_only_on_the_seed() -> None:
    first, again, other = draw(3), draw(3), draw(4)
    assert torch.equal(first.features, again.features)
    assert torch.equal(first.labels, again.labels)
    assert sets_digest(first) == sets_digest(again) != sets_digest(other)


def test_shapes_and_probabilities() -> None:
    data = draw(0, examples=10)
    assert data.features.shape == (10, 8) and data.labels.shape == (10,)
    assert len(data) == 10
    assert data.labels.dtype == torch.int64 and 0 <= int(data.labels.min())
    assert int(data.labels.max()) < 4
    assert torch.allclose(data.teacher_probs.sum(dim=-1), torch.ones(10))


def test_noise_floor_matches_a_loop_over_examples() -> None:
    data = draw(1, examples=20)
    entropies = [
        -sum(p * math.log(p) for p in row.tolist() if p > 0) for row in data.teacher_probs.double()
    ]
    assert noise_floor(data) == pytest.approx(sum(entropies) / len(entropies), rel=1e-9)


def test_labels_are_drawn_from_the_teacher() -> None:
    # On many examples the teacher's own loss on its drawn labels averages the noise floor.
    data = draw(2, examples=20_000)
    teacher_loss = float(F.nll_loss(data.teacher_probs.log(), data.labels))
    assert teacher_loss == pytest.approx(noise_floor(data), rel=0.03)
    assert 0.1 < noise_floor(data) < math.log(4)


def test_sharper_teachers_leave_less_label_noise() -> None:
    blunt, sharp = TeacherTask(sharpness=1.0), TeacherTask(sharpness=10.0)
    assert noise_floor(draw(0, 2000, sharp)) < 0.5 * noise_floor(draw(0, 2000, blunt))


def test_concat_and_first_examples() -> None:
    a, b = draw(0, examples=5), draw(1, examples=3)
    both = concat_sets(a, b)
    assert len(both) == 8
    assert torch.equal(both.features[5:], b.features)
    head = first_examples(a, 2)
    assert len(head) == 2 and torch.equal(head.labels, a.labels[:2])


def test_input_noise_is_on_in_train_mode_only() -> None:
    layer, x = InputNoise(0.5), torch.zeros(1000, 4)
    torch.manual_seed(0)
    noisy = layer(x)
    assert float(noisy.std()) == pytest.approx(0.5, rel=0.1)
    layer.eval()
    assert torch.equal(layer(x), x)
    assert torch.equal(InputNoise(0.0)(x), x)


def test_mean_loss_switches_randomness_and_restores_the_mode() -> None:
    torch.manual_seed(0)
    data = draw(0, examples=256)
    model = build_mlp(TASK, 16, dropout=0.5, input_noise=0.5)
    model.train()
    clean = mean_loss(model, data, train_mode=False)
    assert model.training  # restored
    with torch.no_grad():
        model.eval()
        expected = float(F.cross_entropy(model(data.features), data.labels))
    assert clean == pytest.approx(expected)
    assert mean_loss(model, data, train_mode=False) == clean  # eval mode is deterministic
    assert not model.training  # restored to eval this time
    state = torch.get_rng_state()
    noisy = mean_loss(model, data, train_mode=True)
    assert noisy != clean  # dropout and noise on
    # The masks came from a copy of the generator: training draws on as if nothing happened,
    # and the next measurement, from the generator training has moved on, draws new ones.
    assert torch.equal(torch.get_rng_state(), state)
    assert mean_loss(model, data, train_mode=True) == noisy
    torch.rand(1)  # a training step draws
    assert mean_loss(model, data, train_mode=True) != noisy


def test_a_mode_blind_model_trains_as_a_mode_aware_one_and_ignores_eval_mode() -> None:
    """Built with layers that ignore eval mode, the model draws the same masks and noise in
    train mode as the mode-aware one (same weights, same generator state: the same output),
    and keeps drawing them in eval mode. No noise asked draws nothing, as InputNoise."""
    data = draw(0, examples=64)
    outputs = []
    for mode_blind in (False, True):
        torch.manual_seed(1)
        model = build_mlp(TASK, 16, dropout=0.5, input_noise=0.5, mode_blind=mode_blind)
        torch.manual_seed(2)
        outputs.append(model(data.features))
    assert torch.equal(outputs[0], outputs[1])
    model.eval()
    with torch.no_grad():
        assert not torch.equal(model(data.features), model(data.features))
    no_noise = build_mlp(TASK, 16, dropout=0.0, mode_blind=True)[0]
    state = torch.get_rng_state()
    assert torch.equal(no_noise(data.features), data.features)
    assert torch.equal(torch.get_rng_state(), state)


def test_decoded_examples_show_the_teacher_probability_of_the_label() -> None:
    data = draw(0, examples=5)
    examples = decoded_examples(data, count=2)
    assert len(examples) == 2
    first = examples[0]
    assert len(first["features_first4"]) == 4
    assert first["teacher_p_label"] == pytest.approx(
        float(data.teacher_probs[0, first["label"]]), abs=1e-3
    )
