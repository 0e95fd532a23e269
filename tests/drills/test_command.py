import shlex

import pytest

from drills.cli import build_parser, parse_knob_settings
from drills.command import replay_command
from drills.knobs import resolve_knobs
from drills.registry import get_drill

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
