import shlex

import pytest

from drills.cli import build_parser, parse_knob_settings
from drills.core.command import replay_command
from drills.core.knobs import resolve_knobs
from drills.core.registry import get_drill

drill = get_drill("overfit-one-batch")


def test_the_command_lists_every_knob_sorted() -> None:
    knobs = resolve_knobs(drill, {"lr": "0.003"})
    assert replay_command(drill.slug, knobs, 4) == (
        "python -m drills run overfit-one-batch --set bug=none --set examples=8 "
        "--set lr=0.003 --set steps=200 --seed 4"
    )


@pytest.mark.parametrize("lr", [1 / 3, 1e-6, 0.1 + 0.2, 7.0])
@pytest.mark.parametrize("seed", [0, 12345])
def test_parsing_the_command_back_gives_the_same_run(lr: float, seed: int) -> None:
    knobs = resolve_knobs(drill, {"lr": lr, "bug": "shuffled-labels", "examples": 5})
    argv = shlex.split(replay_command(drill.slug, knobs, seed))
    assert argv[:3] == ["python", "-m", "drills"]
    args = build_parser().parse_args(argv[3:])
    assert args.slug == drill.slug
    assert args.seed == seed
    assert resolve_knobs(drill, parse_knob_settings(args.knobs)) == knobs


def test_a_float_list_is_written_as_comma_separated_floats() -> None:
    sweep = get_drill("lr-sweep")
    knobs = resolve_knobs(sweep, {"lrs": "1e-6,1e-4,1e-2,1"})
    assert replay_command(sweep.slug, knobs, 0) == (
        "python -m drills run lr-sweep --set lrs=1e-06,0.0001,0.01,1.0 --set optimizer=sgd "
        "--set optimizer_holds=the-model --set zero_grad=before-backward --seed 0"
    )


@pytest.mark.parametrize("lrs", [[1 / 3, 1e-6, 0.1 + 0.2], [7.0], [3e-4, 1e-7, 10.0]])
def test_a_float_list_survives_the_round_trip(lrs: list[float]) -> None:
    sweep = get_drill("lr-sweep")
    knobs = resolve_knobs(sweep, {"lrs": lrs, "optimizer": "adam"})
    args = build_parser().parse_args(shlex.split(replay_command(sweep.slug, knobs, 3))[3:])
    assert resolve_knobs(sweep, parse_knob_settings(args.knobs)) == knobs
